//! A task's CPU-time and memory limits as rlimits, for the sandboxes that
//! set them in the child before `exec` (Linux, macOS).

use super::SandboxSettings;

/// A resource as `setrlimit` takes it (glibc names its own type).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
type Resource = libc::__rlimit_resource_t;
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
type Resource = libc::c_int;

/// The limits a task asks for.
#[derive(Debug, Clone, Default)]
pub struct Rlimits(Vec<(Resource, u64)>);

impl Rlimits {
    pub fn of(settings: &SandboxSettings) -> Self {
        let mut limits = Vec::new();
        if let Some(s) = settings.cpu_seconds {
            limits.push((libc::RLIMIT_CPU, s));
        }
        if let Some(b) = settings.memory_bytes {
            limits.push((libc::RLIMIT_AS, b));
        }
        Self(limits)
    }

    /// And at most `n` processes and threads for the command's user
    /// (`RLIMIT_NPROC`, soft and hard: a command cannot raise it).
    #[cfg(target_os = "linux")]
    pub fn with_processes(mut self, n: u64) -> Self {
        self.0.push((libc::RLIMIT_NPROC, n));
        self
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Sets them on the calling process. Only system calls on stack
    /// values: safe between `fork` and `exec`. For CPU time the hard limit
    /// is a second later, so the command first gets SIGXCPU (which says
    /// why) rather than SIGKILL.
    pub fn apply(&self) -> std::io::Result<()> {
        for &(res, value) in &self.0 {
            let hard = if res == libc::RLIMIT_CPU {
                value + 1
            } else {
                value
            };
            let lim = libc::rlimit {
                rlim_cur: value,
                rlim_max: hard,
            };
            // SAFETY: a plain system call on a stack value.
            if unsafe { libc::setrlimit(res, &lim) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }
}
