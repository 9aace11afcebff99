//! The supervisor's seccomp filter: which calls of a confined command
//! are handed to the supervisor (and which it refuses outright).

use super::Rules;
use crate::contain::os::seccomp::{
    self, F_SETOWN_EX, FIOSETOWN, Op, SETS_A_PROCESS, SETS_PRIORITY, SIOCSPGRP,
};

/// The filter whose calls the supervisor decides for `rules`: every
/// `connect`, `setsid` and `setpgid` (see [`Rules::groups`]); with the exec wall, every `execve`; with signals to decide,
/// every way to send one.
pub fn filter(rules: &Rules) -> Vec<libc::sock_filter> {
    use Op::*;
    let deny = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
    let nr = |n: libc::c_long| n as u32;
    let mut ops = Vec::from(seccomp::native_only(deny));
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
    ops.push(IfEq(nr(libc::SYS_socket), "socket"));
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
    ops.extend([
        Ret(libc::SECCOMP_RET_ALLOW),
        Label("socket"),
        Load(seccomp::arg(0)),
        IfEq(libc::AF_UNIX as u32, "unix"),
        Ret(libc::SECCOMP_RET_ALLOW),
        Label("unix"),
        Load(seccomp::arg(1)),
        And(0xf),
        IfEq(libc::SOCK_DGRAM as u32, "deny"),
        Ret(libc::SECCOMP_RET_ALLOW),
    ]);
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
        Ret(deny),
    ]);
    seccomp::assemble(&ops)
}
