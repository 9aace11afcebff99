//! Without Landlock, what keeps a command out of the runner's memory.
//!
//! Landlock refuses a confined process every ptrace-mode attach to a
//! process outside its domain: `ptrace`, `/proc/PID/mem`,
//! `process_vm_readv`, `pidfd_getfd`. Without it, the kernel lets a
//! process attach to another of the same user that is dumpable (Yama
//! permitting), and root with `CAP_SYS_PTRACE` to any. So where there is
//! no Landlock the runner makes itself not dumpable ([`guard_runner`]),
//! which keeps out every process without `CAP_SYS_PTRACE`, and each
//! command drops that capability before `exec`, from its bounding set
//! too, so that a root command does not get it back by executing a
//! program (with every other: [`super::privileges`]; a task may not keep
//! this one there).

use std::io;

/// Makes the runner not dumpable: a process without `CAP_SYS_PTRACE`
/// can no longer attach to it or open its memory. Process-wide and for
/// the rest of the run (it also means no core dump of the runner).
pub(super) fn guard_runner() {
    // SAFETY: a plain system call on this process.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
        tracing::debug!(
            "could not make the runner undumpable: {}",
            io::Error::last_os_error()
        );
    }
}

/// Whether the runner is dumpable (for the tests).
#[cfg(test)]
fn runner_is_dumpable() -> bool {
    // SAFETY: a plain system call on this process.
    unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) == 1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run in a child process of its own (the setting is process-wide).
    #[test]
    fn the_guarded_runner_is_not_dumpable() {
        let exe = std::env::current_exe().unwrap();
        if std::env::var_os("RUNNER_TEST_GUARD_CHILD").is_some() {
            guard_runner();
            assert!(!runner_is_dumpable());
            return;
        }
        let out = std::process::Command::new(exe)
            .args([
                "--exact",
                "contain::os::trace_wall::tests::the_guarded_runner_is_not_dumpable",
            ])
            .env("RUNNER_TEST_GUARD_CHILD", "1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("1 passed"));
        assert!(runner_is_dumpable());
    }
}
