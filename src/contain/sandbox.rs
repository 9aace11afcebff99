//! The Linux sandbox for bash commands and checks.
//!
//! Landlock (kernel 5.13+) limits writes to the task's workspace copy, its
//! private temp folder, `/dev/null` and the paths a task adds; everything
//! stays readable and executable. `network: false` installs a seccomp filter
//! that refuses `socket(AF_INET | AF_INET6)` and `io_uring_setup` (and every
//! system call of a foreign ABI, which could reach `socketcall`), and, where
//! Landlock has network rules (ABI 4+), also denies TCP bind and connect.
//! CPU-time and memory limits are rlimits.
//!
//! The ruleset and the filter are built in the runner ([`Confinement::new`]);
//! the child only makes system calls ([`Confinement::apply`]), which is what
//! may safely run between `fork` and `exec` in a threaded program.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::exec_guard::ExecGuard;
use super::supervisor::{IpRule, Rules, Supervised};

/// `sandbox:` modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxMode {
    /// Sandbox where the kernel can; otherwise run unsandboxed and say so.
    #[default]
    BestEffort,
    /// Fail the task where the kernel cannot sandbox.
    Required,
    Off,
}

/// A task's `sandbox:` and `limits:`.
#[derive(Debug, Clone, PartialEq)]
pub struct SandboxSettings {
    pub mode: SandboxMode,
    /// Whether commands may use the network (default true).
    pub network: bool,
    /// The runner's proxy (`network:` rules): commands may connect to this
    /// port only, where the kernel's Landlock has network rules (ABI 4+);
    /// elsewhere they get no network at all.
    pub proxy_port: Option<u16>,
    /// More folders commands may write (absolute, or relative to the task
    /// file; `~/` is the home folder).
    pub write: Vec<PathBuf>,
    /// RLIMIT_CPU, seconds.
    pub cpu_seconds: Option<u64>,
    /// RLIMIT_AS, bytes.
    pub memory_bytes: Option<u64>,
    /// Most processes (and threads) the task's commands may have at once
    /// (a pids cgroup, see [`super::pids`]); `None`: no bound.
    pub processes: Option<u64>,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        Self {
            mode: SandboxMode::BestEffort,
            network: true,
            proxy_port: None,
            write: Vec::new(),
            cpu_seconds: None,
            memory_bytes: None,
            processes: None,
        }
    }
}

// Landlock's ABI (include/uapi/linux/landlock.h).
const ACCESS_FS_EXECUTE: u64 = 1 << 0;
const ACCESS_FS_WRITE_FILE: u64 = 1 << 1;
const ACCESS_FS_READ_FILE: u64 = 1 << 2;
const ACCESS_FS_READ_DIR: u64 = 1 << 3;
const ACCESS_FS_TRUNCATE: u64 = 1 << 14;
const ACCESS_FS_IOCTL_DEV: u64 = 1 << 15;
const ACCESS_NET_BIND_TCP: u64 = 1 << 0;
const ACCESS_NET_CONNECT_TCP: u64 = 1 << 1;
const CREATE_RULESET_VERSION: u32 = 1 << 0;
const RULE_PATH_BENEATH: libc::c_int = 1;
const RULE_NET_PORT: libc::c_int = 2;

#[repr(C)]
struct NetPortAttr {
    allowed_access: u64,
    port: u64,
}

/// ABI 6 scopes: no connecting to an abstract Unix socket, and no
/// signal, outside the process's own Landlock domain.
const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
const SCOPE_SIGNAL: u64 = 1 << 1;

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// The file-system rights Landlock knows at `abi`.
fn fs_rights(abi: i32) -> u64 {
    let mut all = (1u64 << 13) - 1; // ABI 1: EXECUTE ..= MAKE_SYM
    if abi >= 2 {
        all |= 1 << 13; // REFER
    }
    if abi >= 3 {
        all |= ACCESS_FS_TRUNCATE;
    }
    if abi >= 5 {
        all |= ACCESS_FS_IOCTL_DEV;
    }
    all
}

/// Set (to anything) to act as if the kernel had no Landlock: how the tests
/// see what `best-effort` and `required` do on such kernels. It can only
/// make a run stricter (`required` fails) or as loose as `sandbox: off`.
pub const SIMULATE_NO_LANDLOCK: &str = "RUNNER_SIMULATE_NO_LANDLOCK";

/// Set to a version to act as if the kernel's Landlock were that old
/// (never newer than it is): how the tests see a kernel without Landlock's
/// network rules (ABI < 4). Like [`SIMULATE_NO_LANDLOCK`], it can only make
/// a run stricter.
pub const SIMULATE_LANDLOCK_ABI: &str = "RUNNER_SIMULATE_LANDLOCK_ABI";

/// Why this kernel offers no Landlock.
#[derive(Debug, Clone, thiserror::Error)]
pub enum NoLandlock {
    #[error("Landlock is unavailable ({SIMULATE_NO_LANDLOCK} is set)")]
    Simulated,
    #[error("the kernel has no Landlock")]
    NotInKernel,
    #[error("Landlock is disabled in this kernel")]
    Disabled,
    #[error("Landlock is unavailable: {0}")]
    Other(String),
}

/// Why the sandbox could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("sandbox: required, but {0}")]
    Required(NoLandlock),
    #[error("cannot build the Landlock ruleset: {0}")]
    Ruleset(std::io::Error),
}

/// The Landlock ABI version of this kernel, or why there is none.
pub fn landlock_abi() -> Result<i32, NoLandlock> {
    if std::env::var_os(SIMULATE_NO_LANDLOCK).is_some() {
        return Err(NoLandlock::Simulated);
    }
    // SAFETY: the documented version query: no attribute, size 0.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    if v >= 1 {
        let simulated = std::env::var(SIMULATE_LANDLOCK_ABI)
            .ok()
            .and_then(|s| s.parse::<i32>().ok())
            .filter(|s| *s >= 1);
        Ok(simulated.map_or(v as i32, |s| s.min(v as i32)))
    } else {
        let e = std::io::Error::last_os_error();
        Err(match e.raw_os_error() {
            Some(libc::ENOSYS) => NoLandlock::NotInKernel,
            Some(libc::EOPNOTSUPP) => NoLandlock::Disabled,
            _ => NoLandlock::Other(e.to_string()),
        })
    }
}

/// A folder commands may not read, except some paths beneath it: the
/// original workspace while a copy stands in for it, so that code the
/// analysis cannot see into still cannot read what the policy denies
/// reading (those files are left out of the copy; see
/// `workspace::isolate`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HiddenTree {
    /// Absolute and canonical.
    pub root: PathBuf,
    /// Paths beneath `root` that stay readable (the git object stores the
    /// copy's git view reads through its alternates).
    pub except: Vec<PathBuf>,
}

impl HiddenTree {
    /// Whether hiding `root` would hide what every command needs: the
    /// file-system root, or a folder holding the home folder (toolchains
    /// live there). Such a tree is not hidden.
    pub fn is_hideable(root: &Path) -> bool {
        if root.parent().is_none() {
            return false;
        }
        match std::env::var_os("HOME") {
            Some(home) => !Path::new(&home).starts_with(root),
            None => true,
        }
    }
}

/// What a child applies to itself before `exec`.
#[derive(Debug)]
pub struct Confinement {
    ruleset: Option<OwnedFd>,
    filter: Vec<libc::sock_filter>,
    rlimits: Vec<(libc::__rlimit_resource_t, u64)>,
    /// For the transcript: what is enforced.
    pub description: String,
    /// Whether the [`HiddenTree`] asked for is unreadable.
    pub hides: bool,
    /// What the supervisor decides for these commands, where it runs
    /// (see [`super::supervisor`]), and its filter.
    supervisor: Option<(Arc<Rules>, Vec<libc::sock_filter>)>,
    /// The task's process bound, which each command joins.
    pids: Option<Arc<super::pids::PidsCgroup>>,
}

impl Confinement {
    /// Builds the sandbox for commands writing to `writable` folders.
    /// `Ok(None)`: sandbox off, or unavailable under best-effort (the
    /// description says which, through `Err` only for `required`).
    pub fn new(
        settings: &SandboxSettings,
        writable: &[PathBuf],
    ) -> Result<(Option<Confinement>, String), SandboxError> {
        Self::hiding(settings, writable, None)
    }

    /// [`Confinement::new`], and commands cannot read `hidden` (when the
    /// kernel has Landlock and the tree [`HiddenTree::is_hideable`]).
    pub fn hiding(
        settings: &SandboxSettings,
        writable: &[PathBuf],
        hidden: Option<&HiddenTree>,
    ) -> Result<(Option<Confinement>, String), SandboxError> {
        let mut rlimits = Vec::new();
        if let Some(s) = settings.cpu_seconds {
            rlimits.push((libc::RLIMIT_CPU, s));
        }
        if let Some(b) = settings.memory_bytes {
            rlimits.push((libc::RLIMIT_AS, b));
        }
        // With the sandbox off, only a bound the task asked for.
        let (pids, pids_note) = if settings.mode == SandboxMode::Off && settings.processes.is_none()
        {
            (None, String::new())
        } else {
            super::pids::bound(settings.processes)
        };
        // `network:` rules hold even where nothing else is confined:
        // without Landlock's network rules, by no network at all.
        let off_for_rules = |why: &str| {
            settings.proxy_port.map(|_| {
                format!(
                    "; network off (seccomp): the policy's network: rules cannot be enforced {why}"
                )
            })
        };
        if settings.mode == SandboxMode::Off {
            let note = off_for_rules("with sandbox: off");
            let d = format!("off{}{pids_note}", note.clone().unwrap_or_default());
            return Ok(Self::unsandboxed(d, note.is_some(), rlimits, pids));
        }
        let abi = match landlock_abi() {
            Ok(a) => a,
            Err(why) if settings.mode == SandboxMode::Required => {
                return Err(SandboxError::Required(why));
            }
            Err(why) => {
                let note = off_for_rules("without Landlock");
                let d = format!(
                    "unavailable ({why}): commands ran unsandboxed (best-effort){}{pids_note}",
                    note.clone().unwrap_or_default()
                );
                return Ok(Self::unsandboxed(d, note.is_some(), rlimits, pids));
            }
        };
        let hidden = hidden.filter(|h| HiddenTree::is_hideable(&h.root));
        let net = match settings.proxy_port {
            Some(port) if settings.network && abi >= 4 => Net::Proxy(port),
            Some(_) if settings.network => Net::OffForRules,
            _ if settings.network => Net::On,
            _ => Net::Off,
        };
        let ruleset = build_ruleset(abi, writable, hidden, &net).map_err(SandboxError::Ruleset)?;
        let filter = match net {
            Net::On => Vec::new(),
            Net::Proxy(_) => super::seccomp::socket_filter(true),
            Net::Off | Net::OffForRules => super::seccomp::socket_filter(false),
        };
        let supervisor = match super::supervisor::available() {
            Ok(()) => {
                let ip = match net {
                    Net::Proxy(port) => IpRule::Proxy(port),
                    _ => IpRule::Any,
                };
                let rules = Arc::new(Rules::new(ip, writable));
                Some((rules, super::supervisor::filter(false)))
            }
            Err(why) => {
                tracing::debug!("no supervisor: {why}");
                None
            }
        };
        let supervised = match (&supervisor, super::supervisor::available()) {
            (Some(_), _) => match net {
                Net::Proxy(port) => format!(
                    "; connections decided by the runner's supervisor (IP only to the proxy at 127.0.0.1:{port}; Unix sockets only inside the writable folders)"
                ),
                _ => "; connections decided by the runner's supervisor (Unix sockets only inside the writable folders)".to_string(),
            },
            (None, Err(why)) => format!(
                "; no supervisor ({why}): Unix sockets outside the task are reachable"
            ),
            (None, Ok(())) => String::new(),
        };
        let description = format!(
            "landlock (ABI {abi}): writes only in {}; network {}",
            writable
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            match net {
                Net::On => "on".to_string(),
                Net::Off => "off (seccomp)".to_string(),
                Net::Proxy(port) => format!(
                    "only through the runner's proxy (TCP to port {port}; landlock and seccomp)"
                ),
                Net::OffForRules => format!(
                    "off (seccomp): the policy's network: rules need Landlock network rules (ABI 4), and this kernel has ABI {abi}"
                ),
            }
        ) + &hidden
            .map(|h| format!("; {} unreadable", h.root.display()))
            .unwrap_or_default()
            + if abi >= 6 {
                "; no signal or abstract Unix socket outside the task (Landlock scopes)"
            } else {
                "; signals and abstract Unix sockets outside the task not scoped (Landlock ABI 6 needed)"
            }
            + &supervised
            + &pids_note;
        Ok((
            Some(Confinement {
                ruleset: Some(ruleset),
                filter,
                rlimits,
                description: description.clone(),
                hides: hidden.is_some(),
                supervisor,
                pids,
            }),
            description,
        ))
    }

    /// What commands get without Landlock (sandbox off, or none to be
    /// had): no network at all when the policy's network rules cannot be
    /// held, the limits, and the description `d`. `None` when that is
    /// nothing.
    fn unsandboxed(
        d: String,
        no_network: bool,
        rlimits: Vec<(libc::__rlimit_resource_t, u64)>,
        pids: Option<Arc<super::pids::PidsCgroup>>,
    ) -> (Option<Confinement>, String) {
        let filter = if no_network {
            super::seccomp::socket_filter(false)
        } else {
            Vec::new()
        };
        let c =
            (!rlimits.is_empty() || !filter.is_empty() || pids.is_some()).then(|| Confinement {
                ruleset: None,
                filter,
                rlimits,
                description: d.clone(),
                hides: false,
                supervisor: None,
                pids,
            });
        (c, d)
    }

    /// Only a seccomp program (the tests of the programs).
    #[cfg(test)]
    pub(crate) fn with_filter(filter: Vec<libc::sock_filter>) -> Self {
        Self {
            ruleset: None,
            filter,
            rlimits: Vec::new(),
            description: String::new(),
            hides: false,
            supervisor: None,
            pids: None,
        }
    }

    /// The task's process bound, for whatever must keep it as long as the
    /// processes that joined it run.
    pub fn pids(&self) -> Option<Arc<super::pids::PidsCgroup>> {
        self.pids.clone()
    }

    /// Whether Landlock confines writes (and `no_new_privs` holds).
    pub fn confines_writes(&self) -> bool {
        self.ruleset.is_some()
    }

    /// Whether the runner's supervisor decides these commands' connections.
    pub fn supervises(&self) -> bool {
        self.supervisor.is_some()
    }

    /// Whether the supervisor decides these commands' execs against the
    /// policy's program denies.
    pub fn supervises_exec(&self) -> bool {
        self.supervisor
            .as_ref()
            .is_some_and(|(rules, _)| rules.exec.is_some())
    }

    /// The same confinement, recording the connections the supervisor
    /// refuses in `log` (the task's, for its transcript).
    pub fn with_net_log(mut self, log: Arc<crate::net::NetLog>) -> Self {
        if let Some((rules, filter)) = self.supervisor.take() {
            self.supervisor = Some((Arc::new(rules.with_log(log)), filter));
        }
        self
    }

    /// The same confinement, with the supervisor deciding execs with
    /// `guard` too (where the supervisor runs).
    pub fn with_exec(mut self, guard: Arc<ExecGuard>) -> Self {
        if let Some((rules, _)) = &self.supervisor {
            let rules = Arc::new(rules.with_exec(guard));
            self.supervisor = Some((rules, super::supervisor::filter(true)));
            self.description
                .push_str("; execs decided against the policy's program denies (supervisor)");
        }
        self
    }

    /// Prepares one spawn: where the supervisor runs, the thread that will
    /// serve the child's listener (give [`Supervised::child_fd`] to
    /// [`Confinement::apply_with`], and call [`Supervised::spawned`] once
    /// the child is started).
    pub fn supervise(&self) -> std::io::Result<Option<Supervised>> {
        match &self.supervisor {
            Some((rules, _)) => Supervised::start(rules.clone()).map(Some),
            None => Ok(None),
        }
    }

    /// Applies the confinement to the calling process. Only system calls:
    /// safe between `fork` and `exec`. Where the supervisor runs and no
    /// channel to it was prepared, its filter still holds and every
    /// connection fails (closed, not open).
    pub fn apply(&self) -> std::io::Result<()> {
        self.apply_with(-1)
    }

    /// [`Confinement::apply`], sending the supervisor's listener on
    /// `supervisor` (from [`Supervised::child_fd`]).
    pub fn apply_with(&self, supervisor: std::os::fd::RawFd) -> std::io::Result<()> {
        if let Some(pids) = &self.pids {
            pids.join()?;
        }
        for &(res, value) in &self.rlimits {
            // For CPU time the hard limit is a second later, so the command
            // first gets SIGXCPU (which says why) rather than SIGKILL.
            let hard = if res == libc::RLIMIT_CPU {
                value + 1
            } else {
                value
            };
            let lim = libc::rlimit {
                rlim_cur: value,
                rlim_max: hard,
            };
            // SAFETY: plain system call on a stack value.
            if unsafe { libc::setrlimit(res, &lim) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        if self.ruleset.is_none() && self.filter.is_empty() {
            return Ok(());
        }
        // SAFETY: plain system calls; `filter` outlives the call and the
        // kernel copies the program.
        unsafe {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(fd) = &self.ruleset
                && libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0u32) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            if !self.filter.is_empty() {
                install_filter(&self.filter)?;
            }
            if let Some((_, filter)) = &self.supervisor {
                if supervisor >= 0 {
                    super::supervisor::install_in_child(filter, supervisor)?;
                } else {
                    install_filter(filter)?;
                }
            }
        }
        Ok(())
    }
}

/// Installs a seccomp program on the calling thread (with `no_new_privs`
/// already set). Only system calls: safe between `fork` and `exec`.
///
/// # Safety
/// `filter` outlives the call (the kernel copies it).
unsafe fn install_filter(filter: &[libc::sock_filter]) -> std::io::Result<()> {
    let prog = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: a valid program, as the caller promises.
    if unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER,
            &prog as *const libc::sock_fprog,
        )
    } != 0
    {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// What commands get of the network.
enum Net {
    On,
    Off,
    /// TCP connections to the proxy's port only.
    Proxy(u16),
    /// Off, because `network:` rules cannot be enforced on this kernel.
    OffForRules,
}

fn build_ruleset(
    abi: i32,
    writable: &[PathBuf],
    hidden: Option<&HiddenTree>,
    net: &Net,
) -> std::io::Result<OwnedFd> {
    let all = fs_rights(abi);
    let attr = RulesetAttr {
        handled_access_fs: all,
        handled_access_net: match net {
            _ if abi < 4 => 0,
            Net::On => 0,
            Net::Off | Net::OffForRules => ACCESS_NET_BIND_TCP | ACCESS_NET_CONNECT_TCP,
            // Binding stays free (a test server a command starts), but
            // connecting to it, or anywhere but the proxy, does not.
            Net::Proxy(_) => ACCESS_NET_CONNECT_TCP,
        },
        // A command cannot signal the runner or any process outside its
        // task (`kill -9 $PPID`), nor reach a daemon's abstract socket.
        scoped: if abi >= 6 {
            SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        } else {
            0
        },
    };
    // Each ABI knows the fields up to its own: ABI 1-3 the first, 4-5 two.
    let size = match abi {
        6.. => std::mem::size_of::<RulesetAttr>(),
        4 | 5 => 2 * std::mem::size_of::<u64>(),
        _ => std::mem::size_of::<u64>(),
    };
    // SAFETY: a valid attribute of the size given.
    let fd = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, &attr, size, 0u32) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel returned a new descriptor (close-on-exec).
    let ruleset = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    let read =
        ACCESS_FS_EXECUTE | ACCESS_FS_READ_FILE | ACCESS_FS_READ_DIR | (all & ACCESS_FS_IOCTL_DEV);
    match hidden {
        None => add_rule(&ruleset, Path::new("/"), read)?,
        Some(h) => {
            // Folders stay listable everywhere; files are readable
            // everywhere but beneath the hidden root.
            add_rule(&ruleset, Path::new("/"), ACCESS_FS_READ_DIR)?;
            grant_all_but(&ruleset, &h.root, read)?;
            for keep in &h.except {
                add_rule(&ruleset, keep, read)?;
            }
        }
    }
    let dev_null = ACCESS_FS_READ_FILE | ACCESS_FS_WRITE_FILE | (all & ACCESS_FS_TRUNCATE);
    add_rule(&ruleset, Path::new("/dev/null"), dev_null)?;
    for dir in writable {
        add_rule(&ruleset, dir, all)?;
    }
    if let Net::Proxy(port) = net {
        // By port: Landlock has no address rules, so this is the port on
        // any address (see docs/network.md).
        let attr = NetPortAttr {
            allowed_access: ACCESS_NET_CONNECT_TCP,
            port: u64::from(*port),
        };
        // SAFETY: a valid descriptor and attribute, as the ABI wants.
        let r = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset.as_raw_fd(),
                RULE_NET_PORT,
                &attr as *const NetPortAttr,
                0u32,
            )
        };
        if r != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(ruleset)
}

/// Grants `access` on everything but `hidden` (and what lies beneath it):
/// on each sibling of each folder from `/` down to it. Symbolic links need
/// no rule (access through one is decided on its target), and an entry
/// that cannot be granted stays unreadable. A path created later beside the
/// hidden root is not granted: commands write only in their own folders,
/// so that costs them nothing they could have made.
fn grant_all_but(ruleset: &OwnedFd, hidden: &Path, access: u64) -> std::io::Result<()> {
    let mut toward = hidden;
    while let Some(parent) = toward.parent() {
        let skip = toward.file_name();
        // A folder that cannot be listed, or an entry that cannot be
        // opened, stays unreadable: stricter, never looser.
        for entry in std::fs::read_dir(parent).into_iter().flatten().flatten() {
            if Some(entry.file_name().as_os_str()) == skip
                || entry.file_type().is_ok_and(|t| t.is_symlink())
            {
                continue;
            }
            let _ = add_rule(ruleset, &entry.path(), access);
        }
        toward = parent;
    }
    Ok(())
}

fn add_rule(ruleset: &OwnedFd, path: &Path, access: u64) -> std::io::Result<()> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    let access = if file.metadata()?.is_dir() {
        access
    } else {
        // Rules on files take only the rights that apply to files.
        access
            & (ACCESS_FS_EXECUTE
                | ACCESS_FS_WRITE_FILE
                | ACCESS_FS_READ_FILE
                | ACCESS_FS_TRUNCATE
                | ACCESS_FS_IOCTL_DEV)
    };
    let attr = PathBeneathAttr {
        allowed_access: access,
        parent_fd: file.as_raw_fd(),
    };
    // SAFETY: valid descriptors and a packed attribute, as the ABI wants.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset.as_raw_fd(),
            RULE_PATH_BENEATH,
            &attr as *const PathBeneathAttr,
            0u32,
        )
    };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        return Err(std::io::Error::new(
            e.kind(),
            format!("{}: {e}", path.display()),
        ));
    }
    Ok(())
}

use std::os::unix::fs::OpenOptionsExt;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rights_grow_with_the_abi() {
        assert_eq!(fs_rights(1), 0x1fff);
        assert_eq!(fs_rights(3), 0x7fff);
        assert_eq!(fs_rights(6), 0xffff);
    }

    #[test]
    fn off_without_limits_confines_nothing() {
        let s = SandboxSettings {
            mode: SandboxMode::Off,
            ..Default::default()
        };
        let (c, d) = Confinement::new(&s, &[]).unwrap();
        assert!(c.is_none());
        assert_eq!(d, "off");
    }

    #[test]
    fn a_hidden_tree_is_unreadable_but_its_exceptions_and_siblings_are_not() {
        use std::os::unix::process::CommandExt;
        if landlock_abi().is_err() {
            eprintln!("no Landlock on this kernel: nothing to check");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let hidden = root.join("original");
        std::fs::create_dir_all(hidden.join(".git/objects")).unwrap();
        std::fs::write(hidden.join(".env"), "SECRET").unwrap();
        std::fs::write(hidden.join(".git/objects/blob"), "OBJECT").unwrap();
        std::fs::write(root.join("beside"), "BESIDE").unwrap();
        let tree = HiddenTree {
            root: hidden.clone(),
            except: vec![hidden.join(".git/objects")],
        };
        let (c, d) = Confinement::hiding(&SandboxSettings::default(), &[], Some(&tree)).unwrap();
        let c = std::sync::Arc::new(c.expect("landlock"));
        assert!(c.hides && d.contains("unreadable"), "{d}");
        let cat = |path: &Path| {
            let c = c.clone();
            let mut cmd = std::process::Command::new("cat");
            cmd.arg(path);
            // SAFETY: apply makes only system calls.
            unsafe {
                cmd.pre_exec(move || c.apply());
            }
            let out = cmd.output().unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        assert_eq!(cat(&hidden.join(".env")), "");
        assert_eq!(cat(&root.join("./original/../original/.env")), "");
        assert_eq!(cat(&hidden.join(".git/objects/blob")), "OBJECT");
        assert_eq!(cat(&root.join("beside")), "BESIDE");
        assert!(cat(Path::new("/etc/os-release")).contains("NAME"));
        // The runner itself is not confined.
        assert_eq!(
            std::fs::read_to_string(hidden.join(".env")).unwrap(),
            "SECRET"
        );
    }

    #[test]
    fn the_file_system_root_and_the_home_folder_are_never_hidden() {
        assert!(!HiddenTree::is_hideable(Path::new("/")));
        if let Some(home) = std::env::var_os("HOME") {
            let home = PathBuf::from(home);
            assert!(!HiddenTree::is_hideable(&home));
            assert!(HiddenTree::is_hideable(&home.join("project")));
        }
    }
}
