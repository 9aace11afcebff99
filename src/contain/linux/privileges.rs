//! What a sandboxed command may not do to the machine, or to what the
//! walls can see of it.
//!
//! **No capabilities.** CI runs commands as root more often than not
//! (containers, self-hosted runners), and root's commands held every
//! capability: they could `chroot` into a folder where `/usr/bin/true` is
//! a copy of git, add an address to the host's `lo`, load BPF, read a raw
//! disk. Each command now drops every capability before its exec, from
//! the bounding set too, so that root's exec gives none back (a root exec
//! gets `inheritable | bounding`; both are empty), and `no_new_privs`
//! keeps file capabilities and set-uid bits from granting any. A task may
//! keep named capabilities, each with its reason
//! (`sandbox: {capabilities: [...]}`); the default is none. Where the
//! runner is not root there is nothing to drop, and this costs one
//! `capget`.
//!
//! **No world the walls cannot see into.** A filter refuses `chroot`,
//! `pivot_root`, the mount calls, new namespaces (`unshare`, `clone`
//! with a `CLONE_NEW*` flag; `clone3`, whose flags seccomp cannot read,
//! answers `ENOSYS`, and the C library falls back to `clone`), `setns`,
//! `bpf`, `perf_event_open`, loading kernels and modules, the key
//! management calls, `open_by_handle_at` (which opens a file by a handle
//! and bypasses paths), and `ptrace` and `process_vm_writev` (a command
//! may not trace or write into another: the exec wall's second look is
//! a ptrace attach, and a traced process's execs could not be followed).
//! Unprivileged user namespaces would otherwise give a command all of
//! these inside a world of its own. Where the supervisor runs, its filter
//! holds the same list and records each refusal ([`refused_call`]);
//! without it, [`filter`] refuses them with `EPERM` alone.

use std::io;

use super::seccomp::{self, Op};

/// Calls refused whatever their arguments.
pub(super) const REFUSED: &[(libc::c_long, &str)] = &[
    (libc::SYS_chroot, "chroot"),
    (libc::SYS_pivot_root, "pivot_root"),
    (libc::SYS_mount, "mount"),
    (libc::SYS_umount2, "umount2"),
    (libc::SYS_fsopen, "fsopen"),
    (libc::SYS_fsconfig, "fsconfig"),
    (libc::SYS_fsmount, "fsmount"),
    (libc::SYS_fspick, "fspick"),
    (libc::SYS_move_mount, "move_mount"),
    (libc::SYS_open_tree, "open_tree"),
    (libc::SYS_mount_setattr, "mount_setattr"),
    (libc::SYS_setns, "setns"),
    (libc::SYS_bpf, "bpf"),
    (libc::SYS_perf_event_open, "perf_event_open"),
    (libc::SYS_kexec_load, "kexec_load"),
    (libc::SYS_kexec_file_load, "kexec_file_load"),
    (libc::SYS_init_module, "init_module"),
    (libc::SYS_finit_module, "finit_module"),
    (libc::SYS_delete_module, "delete_module"),
    (libc::SYS_add_key, "add_key"),
    (libc::SYS_request_key, "request_key"),
    (libc::SYS_keyctl, "keyctl"),
    (libc::SYS_open_by_handle_at, "open_by_handle_at"),
    (libc::SYS_ptrace, "ptrace"),
    (libc::SYS_process_vm_writev, "process_vm_writev"),
];

/// The `CLONE_NEW*` flags of `unshare` (`CLONE_NEWTIME`, 0x80, is a
/// signal's bits to `clone`, whose flags test the rest).
const NEW_NAMESPACES: u32 = 0x7E02_0080;
const NEW_NAMESPACES_CLONE: u32 = 0x7E02_0000;

/// The filter's dispatch for these calls: each refused one goes to
/// `refuse`, `unshare` and `clone` asking for a namespace too, and
/// `clone3` returns `ENOSYS` (at the labels this emits; the caller's
/// program then goes on at `rest`).
pub(super) fn dispatch(refuse: &'static str) -> Vec<Op> {
    use Op::*;
    let nr = |n: libc::c_long| n as u32;
    let mut ops: Vec<Op> = REFUSED.iter().map(|(n, _)| IfEq(nr(*n), refuse)).collect();
    ops.extend([
        IfEq(nr(libc::SYS_unshare), "priv_unshare"),
        IfEq(nr(libc::SYS_clone), "priv_clone"),
        IfEq(nr(libc::SYS_clone3), "priv_clone3"),
        Goto("priv_rest"),
        Label("priv_unshare"),
        Load(seccomp::arg(0)),
        IfAny(NEW_NAMESPACES, refuse),
        Ret(libc::SECCOMP_RET_ALLOW),
        Label("priv_clone"),
        Load(seccomp::arg(0)),
        IfAny(NEW_NAMESPACES_CLONE, refuse),
        Ret(libc::SECCOMP_RET_ALLOW),
        Label("priv_clone3"),
        Ret(libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32),
        Label("priv_rest"),
        Load(seccomp::NR),
    ]);
    ops
}

/// What a command is refused, named for the record: the call `nr` with
/// `args`, when it is one of these.
pub(super) fn refused_call(nr: libc::c_long, args: &[u64; 6]) -> Option<String> {
    if let Some((_, name)) = REFUSED.iter().find(|(n, _)| *n == nr) {
        return Some((*name).to_string());
    }
    let flags = args[0] as u32;
    if nr == libc::SYS_unshare && flags & NEW_NAMESPACES != 0 {
        return Some("unshare (a new namespace)".into());
    }
    if nr == libc::SYS_clone && flags & NEW_NAMESPACES_CLONE != 0 {
        return Some("clone (a new namespace)".into());
    }
    None
}

/// The filter of a command no supervisor serves: these calls refused
/// with `EPERM`.
pub(super) fn filter() -> Vec<libc::sock_filter> {
    use Op::*;
    let deny = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
    let mut ops = Vec::from(seccomp::native_only(deny));
    ops.extend(dispatch("deny"));
    ops.extend([Ret(libc::SECCOMP_RET_ALLOW), Label("deny"), Ret(deny)]);
    seccomp::assemble(&ops)
}

/// `_LINUX_CAPABILITY_VERSION_3`: two 32-bit words per set.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;
/// The highest capability number this code knows (`CAP_CHECKPOINT_RESTORE`);
/// the bounding set is cleared up to 63, the kernel refusing past its own.
const LAST_KNOWN: u32 = 40;
/// `CAP_SETPCAP`: what dropping from the bounding set takes.
const CAP_SETPCAP: u32 = 8;

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

/// The calling thread's capability sets (effective, permitted,
/// inheritable), 64 bits each.
fn capabilities() -> io::Result<[u64; 3]> {
    let mut header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: a header and two data words, as version 3 wants.
    if unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let join = |f: fn(&CapData) -> u32| u64::from(f(&data[0])) | (u64::from(f(&data[1])) << 32);
    Ok([
        join(|d| d.effective),
        join(|d| d.permitted),
        join(|d| d.inheritable),
    ])
}

/// Drops every capability but those in `keep` (bit N: capability N) from
/// the calling thread: the bounding set (where it may: with
/// `CAP_SETPCAP`), the ambient set, and the effective, permitted and
/// inheritable sets. Only system calls: safe between `fork` and `exec`.
///
/// # Safety
/// Changes the calling thread's capabilities; call it in the child.
pub(super) unsafe fn drop_capabilities(keep: u64) -> io::Result<()> {
    let [effective, permitted, inheritable] = capabilities()?;
    if effective & (1 << CAP_SETPCAP) != 0 {
        for cap in 0..64u32 {
            if keep & (1 << cap) != 0 {
                continue;
            }
            // SAFETY: a plain system call.
            if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) } != 0 {
                let e = io::Error::last_os_error();
                // EINVAL: past the kernel's last capability.
                if e.raw_os_error() == Some(libc::EINVAL) && cap > LAST_KNOWN {
                    break;
                }
                if e.raw_os_error() != Some(libc::EINVAL) {
                    return Err(e);
                }
            }
        }
    }
    // SAFETY: plain system calls.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
    }
    if (effective | permitted | inheritable) & !keep == 0 {
        return Ok(());
    }
    let kept = permitted & keep;
    let mut header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let word = |v: u64, hi: bool| if hi { (v >> 32) as u32 } else { v as u32 };
    let data = [false, true].map(|hi| CapData {
        effective: word(kept, hi),
        permitted: word(kept, hi),
        inheritable: word(kept, hi),
    });
    // SAFETY: a header and two data words, as version 3 wants.
    if unsafe { libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Whether this runner's commands would hold capabilities without the
/// drop (root, or a user with file or ambient capabilities): what
/// `runner doctor` says.
pub fn runner_holds_capabilities() -> bool {
    capabilities().is_ok_and(|[e, p, _]| (e | p) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    /// `/proc/self/status`'s capability lines of a child that dropped all
    /// but `keep`.
    fn sets_of_child(keep: u64) -> Vec<(String, u64)> {
        let mut cmd = std::process::Command::new("grep");
        cmd.args(["^Cap", "/proc/self/status"]);
        // SAFETY: `drop_capabilities` makes only system calls.
        unsafe { cmd.pre_exec(move || drop_capabilities(keep)) };
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                let mut w = l.split_whitespace();
                let name = w.next().unwrap().trim_end_matches(':').to_string();
                (name, u64::from_str_radix(w.next().unwrap(), 16).unwrap())
            })
            .collect()
    }

    /// After the drop, a child holds nothing in any set, whatever the test
    /// runs as (as root, its exec would have given it every one).
    #[test]
    fn a_child_that_drops_its_capabilities_holds_none() {
        let sets = sets_of_child(0);
        assert_eq!(sets.len(), 5, "{sets:?}");
        for (name, set) in &sets {
            assert_eq!(*set, 0, "{name}");
        }
    }

    /// A kept capability stays where the runner had it (as root: in the
    /// bounding, permitted and effective sets); nothing else does.
    #[test]
    fn a_kept_capability_is_all_that_stays() {
        let net_admin = 1u64 << 12;
        let root = runner_holds_capabilities();
        for (name, set) in sets_of_child(net_admin) {
            assert_eq!(set & !net_admin, 0, "{name}");
            if root && name != "CapAmb" {
                assert_eq!(set, net_admin, "{name}");
            }
        }
    }

    /// What python3 gets from each call the filter refuses.
    #[test]
    fn the_filter_refuses_calls_that_build_worlds() {
        let script = "import ctypes, os\n\
            c = ctypes.CDLL(None, use_errno=True)\n\
            def call(*a):\n\
            \x20   r = c.syscall(*a); return '%d %d' % (r, ctypes.get_errno() if r < 0 else 0)\n\
            print('chroot', call(161, b'/'))\n\
            print('unshare-user', call(272, 0x10000000))\n\
            print('unshare-files', call(272, 0x400))\n\
            print('clone3', call(435, None, 0))\n\
            print('ptrace', call(101, 0, 0, 0, 0))\n\
            print('bpf', call(321, 0, None, 0))\n\
            pid = os.fork()\n\
            if pid == 0: os._exit(0)\n\
            print('fork', os.waitpid(pid, 0)[1])\n";
        let out = super::super::test_support::python_under(Some(filter()), script, false);
        let (p, n) = (libc::EPERM, libc::ENOSYS);
        assert_eq!(
            out,
            format!(
                "chroot -1 {p}\nunshare-user -1 {p}\nunshare-files 0 0\nclone3 -1 {n}\nptrace -1 {p}\nbpf -1 {p}\nfork 0\n"
            )
        );
        // The record names what was refused.
        let mut args = [0u64; 6];
        assert_eq!(
            refused_call(libc::SYS_chroot, &args).as_deref(),
            Some("chroot")
        );
        args[0] = 0x1000_0000;
        assert!(refused_call(libc::SYS_unshare, &args).is_some());
        assert!(refused_call(libc::SYS_clone, &args).is_some());
        args[0] = 0x11; // SIGCHLD: a fork
        assert_eq!(refused_call(libc::SYS_clone, &args), None);
        assert_eq!(refused_call(libc::SYS_getpid, &args), None);
    }
}
