//! The supervisor's seccomp filter: which calls of a confined command
//! are handed to the supervisor to decide, and which it refuses with no
//! decision to make ([`refused`]: a socket kind, a foreign ABI,
//! `io_uring`, a call that builds a world the walls cannot see into, a
//! signal owner named in memory). Those are handed over too, where a
//! supervisor serves the filter, so that each refusal is recorded with
//! the call and the command that made it; the supervisor answers them
//! `EPERM` unread. Where none serves it (a test's confinement), they are
//! refused by the filter itself.

use super::Rules;
use crate::contain::os::privileges;
use crate::contain::os::seccomp::{
    self, F_SETOWN_EX, FIOSETOWN, Op, SETS_A_PROCESS, SETS_PRIORITY, SIOCSPGRP,
};

/// The filter whose calls the supervisor decides for `rules`: every
/// `connect`, `setsid` and `setpgid` (see [`Rules::groups`]); with the exec wall, every `execve`; with signals to decide,
/// every way to send one.
pub fn filter(rules: &Rules) -> Vec<libc::sock_filter> {
    use Op::*;
    let deny = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
    // Served (see `Rules::groups`): refusals go to the supervisor, which
    // records them.
    let refuse = if rules.groups {
        libc::SECCOMP_RET_USER_NOTIF
    } else {
        deny
    };
    let nr = |n: libc::c_long| n as u32;
    let mut ops = Vec::from(seccomp::native_only(refuse));
    ops.extend(privileges::dispatch("deny"));
    ops.extend(seccomp::socket_dispatch(rules.sockets, "deny"));
    ops.extend([
        IfEq(nr(libc::SYS_io_uring_setup), "deny"),
        IfEq(nr(libc::SYS_connect), "notify"),
    ]);
    // Another process's limits or scheduling (see [`targets`]): handed
    // over when the call names one other than the caller (not 0).
    ops.extend(SETS_A_PROCESS.iter().map(|n| IfEq(nr(*n), "names_arg0")));
    ops.extend(SETS_PRIORITY.iter().map(|n| IfEq(nr(*n), "names_arg1")));
    if rules.groups {
        ops.extend([
            IfEq(nr(libc::SYS_setsid), "notify"),
            IfEq(nr(libc::SYS_setpgid), "notify"),
        ]);
    }
    if rules.exec.is_some() {
        ops.extend([
            IfEq(nr(libc::SYS_execve), "notify"),
            IfEq(nr(libc::SYS_execveat), "notify"),
        ]);
    }
    if rules.signals {
        ops.extend([
            IfEq(nr(libc::SYS_kill), "notify"),
            IfEq(nr(libc::SYS_tkill), "notify"),
            IfEq(nr(libc::SYS_tgkill), "notify"),
            IfEq(nr(libc::SYS_rt_sigqueueinfo), "notify"),
            IfEq(nr(libc::SYS_rt_tgsigqueueinfo), "notify"),
            IfEq(nr(libc::SYS_pidfd_send_signal), "notify"),
            IfEq(nr(libc::SYS_fcntl), "fcntl"),
            IfEq(nr(libc::SYS_ioctl), "ioctl"),
        ]);
    }
    ops.push(Ret(libc::SECCOMP_RET_ALLOW));
    if rules.signals {
        // The owner a file signals when ready: by value, decided; in
        // memory (`F_SETOWN_EX`, `FIOSETOWN`, `SIOCSPGRP`), refused.
        ops.extend([
            Label("fcntl"),
            Load(seccomp::arg(1)),
            IfEq(libc::F_SETOWN as u32, "notify"),
            IfEq(F_SETOWN_EX, "deny"),
            Ret(libc::SECCOMP_RET_ALLOW),
            Label("ioctl"),
            Load(seccomp::arg(1)),
            IfEq(FIOSETOWN, "deny"),
            IfEq(SIOCSPGRP, "deny"),
            Ret(libc::SECCOMP_RET_ALLOW),
        ]);
    }
    ops.extend([
        Label("names_arg0"),
        Load(seccomp::arg(0)),
        IfEq(0, "itself"),
        Ret(libc::SECCOMP_RET_USER_NOTIF),
        Label("names_arg1"),
        Load(seccomp::arg(1)),
        IfEq(0, "itself"),
        Ret(libc::SECCOMP_RET_USER_NOTIF),
        Label("itself"),
        Ret(libc::SECCOMP_RET_ALLOW),
        Label("notify"),
        Ret(libc::SECCOMP_RET_USER_NOTIF),
        Label("deny"),
        Ret(refuse),
    ]);
    seccomp::assemble(&ops)
}

/// What [`filter`] hands the supervisor only to be refused, named for the
/// record; `None` for a call it hands over to be decided. Mirrors the
/// filter's refusals: every call it sends to `deny` is named here.
pub(super) fn refused(req: &libc::seccomp_notif, rules: &Rules) -> Option<String> {
    let nr = req.data.nr;
    if seccomp::is_foreign(req.data.arch, nr) {
        return Some(if req.data.arch == seccomp::AUDIT_ARCH {
            format!("a system call of the x32 ABI ({:#x})", nr)
        } else {
            format!(
                "a system call of a foreign ABI (arch {:#x}, number {nr})",
                req.data.arch
            )
        });
    }
    let nr = i64::from(nr);
    let args = &req.data.args;
    if nr == libc::SYS_io_uring_setup {
        return Some("io_uring_setup (its operations are out of the filter's sight)".into());
    }
    if let Some(what) = privileges::refused_call(nr, args) {
        return Some(what);
    }
    if let Some(what) = seccomp::refused_socket(rules.sockets, nr, args) {
        return Some(what);
    }
    let op = args[1] as u32;
    if rules.signals
        && ((nr == libc::SYS_fcntl && op == F_SETOWN_EX)
            || (nr == libc::SYS_ioctl && (op == FIOSETOWN || op == SIOCSPGRP)))
    {
        return Some("a signal owner named in memory (F_SETOWN_EX, FIOSETOWN, SIOCSPGRP)".into());
    }
    None
}
