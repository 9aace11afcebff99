//! Without Landlock, what keeps a command out of the runner's memory.
//!
//! Landlock refuses a confined process every ptrace-mode attach to a
//! process outside its domain: `ptrace`, `/proc/PID/mem`,
//! `process_vm_readv`, `pidfd_getfd`. Without it, the kernel lets a
//! process attach to another of the same user that is dumpable (Yama
//! permitting), and root with `CAP_SYS_PTRACE` to any. So where there is
//! no Landlock the runner makes itself not dumpable ([`guard_runner`]),
//! which keeps out every process without `CAP_SYS_PTRACE`, and each
//! command drops that capability before `exec` ([`drop_ptrace`]), from
//! its bounding set too, so that a root command does not get it back by
//! executing a program.

use std::io;

/// `CAP_SYS_PTRACE`'s number.
const CAP_SYS_PTRACE: u32 = 19;
/// `_LINUX_CAPABILITY_VERSION_3`: two 32-bit words per set.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

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

/// Drops `CAP_SYS_PTRACE` from the calling thread: from the bounding set
/// (where it may: root, with `CAP_SETPCAP`) and from the effective,
/// permitted and inheritable sets (the ambient set follows). Only system
/// calls: safe between `fork` and `exec`.
///
/// # Safety
/// Changes the calling thread's capabilities; call it in the child.
pub(super) unsafe fn drop_ptrace() -> io::Result<()> {
    // SAFETY: plain system calls with valid arguments.
    unsafe {
        if libc::prctl(
            libc::PR_CAPBSET_DROP,
            CAP_SYS_PTRACE as libc::c_ulong,
            0,
            0,
            0,
        ) != 0
        {
            // EPERM: no CAP_SETPCAP (not root), so nothing to drop there
            // that an exec would give back.
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EPERM) {
                return Err(e);
            }
        }
        let mut header = CapHeader {
            version: CAPABILITY_VERSION_3,
            pid: 0,
        };
        let mut data = [CapData::default(); 2];
        if libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) != 0 {
            return Err(io::Error::last_os_error());
        }
        let bit = 1u32 << CAP_SYS_PTRACE;
        let d = &mut data[0];
        if (d.effective | d.permitted | d.inheritable) & bit == 0 {
            return Ok(());
        }
        d.effective &= !bit;
        d.permitted &= !bit;
        d.inheritable &= !bit;
        if libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    /// The capability sets `/proc/self/status` shows a child that dropped
    /// `CAP_SYS_PTRACE`: none holds it, whatever the test runs as.
    #[test]
    fn a_child_that_drops_ptrace_holds_it_in_no_set() {
        let mut cmd = std::process::Command::new("grep");
        cmd.args(["^Cap", "/proc/self/status"]);
        // SAFETY: `drop_ptrace` makes only system calls.
        unsafe { cmd.pre_exec(|| drop_ptrace()) };
        let out = cmd.output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        for line in text.lines() {
            let hex = line.split_whitespace().nth(1).unwrap();
            let set = u64::from_str_radix(hex, 16).unwrap();
            assert_eq!(set & (1 << CAP_SYS_PTRACE), 0, "{line}");
        }
    }

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
