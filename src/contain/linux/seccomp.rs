//! The seccomp programs of the sandbox's network switch, and how a program is
//! installed on a thread ([`install`]).
//!
//! Off (`network: false`, or `network:` rules where neither the
//! supervisor nor Landlock's network rules can confine connections): no
//! IPv4 or IPv6 socket at all. Through the proxy (`network:` rules, with
//! the supervisor or Landlock ABI 4+): TCP sockets only, because the
//! supervisor and Landlock decide `connect` and nothing else (UDP, raw
//! sockets, SCTP would go around them), and no TCP Fast Open send, which
//! connects without `connect`. In both, only Unix and netlink sockets besides (no packet
//! sockets), no `io_uring` (whose operations seccomp cannot see), and no
//! system call of a foreign ABI (which could reach `socketcall`).

#[cfg(target_arch = "x86_64")]
pub(super) const AUDIT_ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
#[cfg(target_arch = "aarch64")]
pub(super) const AUDIT_ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub(super) const AUDIT_ARCH: u32 = 0;

/// `seccomp_data`: the system call number, the architecture, and the low
/// half of argument `n` (little-endian).
pub(super) const NR: u32 = 0;
pub(super) const ARCH: u32 = 4;
pub(super) const fn arg(n: u32) -> u32 {
    16 + 8 * n
}

const MSG_FASTOPEN: u32 = 0x2000_0000;

/// `fcntl` and `ioctl` commands that name a signal's target in memory
/// (the same on x86-64 and AArch64).
pub(super) const F_SETOWN_EX: u32 = 15;
pub(super) const FIOSETOWN: u32 = 0x8901;
pub(super) const SIOCSPGRP: u32 = 0x8902;

/// Calls that change another process's limits or scheduling, named by its
/// number in their first argument (0: the caller).
pub(super) const SETS_A_PROCESS: [libc::c_long; 5] = [
    libc::SYS_prlimit64,
    libc::SYS_sched_setaffinity,
    libc::SYS_sched_setscheduler,
    libc::SYS_sched_setparam,
    libc::SYS_sched_setattr,
];

/// Calls that change priorities of whom their first two arguments name
/// (`which`, `who`; who 0: the caller, its group or its user), and their
/// `which` for one process, a process group and every process of a user.
pub(super) const SETS_PRIORITY: [libc::c_long; 2] = [libc::SYS_setpriority, libc::SYS_ioprio_set];
pub(super) const WHO_PROCESS: [u32; 2] = [0, 1]; // PRIO_PROCESS, IOPRIO_WHO_PROCESS
pub(super) const WHO_GROUP: [u32; 2] = [1, 2]; // PRIO_PGRP, IOPRIO_WHO_PGRP
pub(super) const WHO_USER: [u32; 2] = [2, 3]; // PRIO_USER, IOPRIO_WHO_USER

/// One instruction, with jumps to labels.
pub(super) enum Op {
    Load(u32),
    And(u32),
    /// If the accumulator equals `k`, go to the label, else on.
    IfEq(u32, &'static str),
    /// If any bit of `k` is set.
    IfAny(u32, &'static str),
    /// Always, as far as needed (the conditional jumps reach 255
    /// instructions).
    Goto(&'static str),
    /// Returns `ret` if the accumulator equals `k`, else goes on (no label:
    /// a list of any length).
    RetIfEq(u32, u32),
    /// Returns `ret` if the accumulator is at least `k`, else goes on.
    RetIfGe(u32, u32),
    Ret(u32),
    Label(&'static str),
}

/// The start of each program: a system call of a foreign ABI (i386's
/// numbers through `int 0x80`, x32's) returns `foreign`; then the call's
/// number is loaded.
pub(super) fn native_only(foreign: u32) -> [Op; 6] {
    use Op::*;
    [
        Load(ARCH),
        IfEq(AUDIT_ARCH, "native"),
        Ret(foreign),
        Label("native"),
        Load(NR),
        RetIfGe(0x4000_0000, foreign),
    ]
}

/// Whether a notification's call is of a foreign ABI (what
/// [`native_only`] sends on).
pub(super) fn is_foreign(arch: u32, nr: i32) -> bool {
    arch != AUDIT_ARCH || nr as u32 >= 0x4000_0000
}

/// Resolves labels into BPF's relative jumps (forward only).
pub(super) fn assemble(ops: &[Op]) -> Vec<libc::sock_filter> {
    use libc::{BPF_ABS, BPF_ALU, BPF_AND, BPF_JA, BPF_JEQ, BPF_JGE, BPF_JMP, BPF_JSET, BPF_K};
    use libc::{BPF_LD, BPF_RET, BPF_W};
    let mut at = std::collections::HashMap::new();
    let mut n = 0usize;
    for op in ops {
        match op {
            Op::Label(l) => {
                at.insert(*l, n);
            }
            Op::RetIfEq(..) | Op::RetIfGe(..) => n += 2,
            _ => n += 1,
        }
    }
    let insn = |code: u32, k: u32, jt: u8, jf: u8| libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    };
    let mut out = Vec::with_capacity(n);
    for op in ops {
        let here = out.len();
        let far = |l: &str| -> u32 {
            let target = at[l];
            assert!(target > here, "seccomp: backward jump to {l}");
            u32::try_from(target - here - 1).expect("seccomp: jump too far")
        };
        let to = |l: &str| -> u8 { u8::try_from(far(l)).expect("seccomp: jump too far") };
        if let Op::RetIfEq(k, ret) | Op::RetIfGe(k, ret) = op {
            let jump = if matches!(op, Op::RetIfEq(..)) {
                BPF_JEQ
            } else {
                BPF_JGE
            };
            out.push(insn(BPF_JMP | jump | BPF_K, *k, 0, 1));
            out.push(insn(BPF_RET | BPF_K, *ret, 0, 0));
            continue;
        }
        out.push(match op {
            Op::Label(_) => continue,
            Op::Load(off) => insn(BPF_LD | BPF_W | BPF_ABS, *off, 0, 0),
            Op::And(k) => insn(BPF_ALU | BPF_AND | BPF_K, *k, 0, 0),
            Op::IfEq(k, l) => insn(BPF_JMP | BPF_JEQ | BPF_K, *k, to(l), 0),
            Op::IfAny(k, l) => insn(BPF_JMP | BPF_JSET | BPF_K, *k, to(l), 0),
            Op::Goto(l) => insn(BPF_JMP | BPF_JA, far(l), 0, 0),
            Op::Ret(k) => insn(BPF_RET | BPF_K, *k, 0, 0),
            Op::RetIfEq(..) | Op::RetIfGe(..) => unreachable!("emitted above"),
        });
    }
    out
}

/// What sockets commands may open (`network:`), for [`socket_dispatch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sockets {
    /// Any but a datagram Unix socket (the network is on).
    Any,
    /// TCP (to the proxy), Unix streams and netlink.
    Proxy,
    /// Unix streams and netlink: no IP at all.
    Off,
}

/// The dispatch of the socket calls for `sockets` (the program's number
/// loaded): what may not open or send goes to `refuse`, what may to
/// `allow`, the rest on to the next op.
///
/// Whatever the network, a Unix socket is a stream or a sequenced-packet
/// one: a datagram Unix socket (`SOCK_DGRAM`, and `SOCK_RAW`, which the
/// kernel makes one) sends to an address named in each `sendto` or
/// `sendmsg`, in memory the command can change after a check, so none
/// opens, from `socket` or from `socketpair`. A stream or sequenced-packet
/// socket reaches only what it connected to, and `connect` is decided.
/// With the network off or through the proxy, only Unix and netlink
/// sockets (and, through the proxy, TCP, whose connects are decided) open
/// at all, and no TCP Fast Open send connects without `connect`.
pub(super) fn socket_dispatch(sockets: Sockets, refuse: &'static str) -> Vec<Op> {
    use Op::*;
    let nr = |n: libc::c_long| n as u32;
    let mut ops = vec![
        IfEq(nr(libc::SYS_socket), "sock_socket"),
        IfEq(nr(libc::SYS_socketpair), "sock_unix"),
    ];
    if sockets != Sockets::Any {
        ops.extend([
            IfEq(nr(libc::SYS_sendto), "sock_flags3"),
            IfEq(nr(libc::SYS_sendmmsg), "sock_flags3"),
            IfEq(nr(libc::SYS_sendmsg), "sock_flags2"),
        ]);
    }
    ops.push(Goto("sock_rest"));
    if sockets != Sockets::Any {
        ops.extend([
            Label("sock_flags3"),
            Load(arg(3)),
            IfAny(MSG_FASTOPEN, refuse),
            Ret(libc::SECCOMP_RET_ALLOW),
            Label("sock_flags2"),
            Load(arg(2)),
            IfAny(MSG_FASTOPEN, refuse),
            Ret(libc::SECCOMP_RET_ALLOW),
        ]);
    }
    ops.extend([
        Label("sock_socket"),
        Load(arg(0)),
        IfEq(libc::AF_UNIX as u32, "sock_unix"),
    ]);
    match sockets {
        Sockets::Any => ops.push(Ret(libc::SECCOMP_RET_ALLOW)),
        Sockets::Off => ops.extend([IfEq(libc::AF_NETLINK as u32, "sock_allow"), Goto(refuse)]),
        Sockets::Proxy => ops.extend([
            IfEq(libc::AF_NETLINK as u32, "sock_allow"),
            IfEq(libc::AF_INET as u32, "sock_inet"),
            IfEq(libc::AF_INET6 as u32, "sock_inet"),
            Goto(refuse),
            Label("sock_inet"),
            // The type without SOCK_NONBLOCK and SOCK_CLOEXEC.
            Load(arg(1)),
            And(0xf),
            IfEq(libc::SOCK_STREAM as u32, "sock_stream"),
            Goto(refuse),
            Label("sock_stream"),
            Load(arg(2)),
            IfEq(0, "sock_allow"),
            IfEq(libc::IPPROTO_TCP as u32, "sock_allow"),
            Goto(refuse),
        ]),
    }
    ops.extend([
        Label("sock_unix"),
        Load(arg(1)),
        And(0xf),
        IfEq(libc::SOCK_STREAM as u32, "sock_allow"),
        IfEq(libc::SOCK_SEQPACKET as u32, "sock_allow"),
        Goto(refuse),
        Label("sock_allow"),
        Ret(libc::SECCOMP_RET_ALLOW),
        Label("sock_rest"),
        Load(NR),
    ]);
    ops
}

/// What [`socket_dispatch`] refuses, named for the record: the call `nr`
/// with `args`, under `sockets`.
pub(super) fn refused_socket(
    sockets: Sockets,
    nr: libc::c_long,
    args: &[u64; 6],
) -> Option<String> {
    let fastopen = |flags: u64| flags as u32 & MSG_FASTOPEN != 0;
    let unix_ok = |kind: u64| {
        let t = (kind as u32 & 0xf) as i32;
        t == libc::SOCK_STREAM || t == libc::SOCK_SEQPACKET
    };
    let (family, kind, proto) = (args[0] as u32 as i32, args[1], args[2] as u32 as i32);
    let name = || {
        format!(
            "{}({}, {})",
            if nr == libc::SYS_socket {
                "socket"
            } else {
                "socketpair"
            },
            family_name(family),
            kind_name(kind)
        )
    };
    match nr {
        libc::SYS_socketpair => (!unix_ok(kind)).then(name),
        libc::SYS_socket if family == libc::AF_UNIX => (!unix_ok(kind)).then(name),
        libc::SYS_socket => {
            let allowed = match sockets {
                Sockets::Any => true,
                Sockets::Off => family == libc::AF_NETLINK,
                Sockets::Proxy => {
                    family == libc::AF_NETLINK
                        || ((family == libc::AF_INET || family == libc::AF_INET6)
                            && (kind as u32 & 0xf) as i32 == libc::SOCK_STREAM
                            && (proto == 0 || proto == libc::IPPROTO_TCP))
                }
            };
            (!allowed).then(name)
        }
        libc::SYS_sendto | libc::SYS_sendmmsg if sockets != Sockets::Any && fastopen(args[3]) => {
            Some("a TCP Fast Open send (it connects without connect)".into())
        }
        libc::SYS_sendmsg if sockets != Sockets::Any && fastopen(args[2]) => {
            Some("a TCP Fast Open send (it connects without connect)".into())
        }
        _ => None,
    }
}

fn family_name(family: i32) -> String {
    match family {
        libc::AF_UNIX => "AF_UNIX".into(),
        libc::AF_INET => "AF_INET".into(),
        libc::AF_INET6 => "AF_INET6".into(),
        libc::AF_NETLINK => "AF_NETLINK".into(),
        libc::AF_PACKET => "AF_PACKET".into(),
        libc::AF_VSOCK => "AF_VSOCK".into(),
        n => format!("family {n}"),
    }
}

fn kind_name(kind: u64) -> String {
    match (kind as u32 & 0xf) as i32 {
        libc::SOCK_STREAM => "SOCK_STREAM".into(),
        libc::SOCK_DGRAM => "SOCK_DGRAM".into(),
        libc::SOCK_RAW => "SOCK_RAW".into(),
        libc::SOCK_SEQPACKET => "SOCK_SEQPACKET".into(),
        n => format!("type {n}"),
    }
}

/// The program of a command no supervisor serves: the sockets `sockets`
/// allows (see [`socket_dispatch`]), `io_uring` (whose operations seccomp
/// cannot see) and foreign ABIs refused with `EPERM`.
pub fn socket_filter(sockets: Sockets) -> Vec<libc::sock_filter> {
    use Op::*;
    let deny = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
    let mut ops = Vec::from(native_only(deny));
    ops.push(IfEq(libc::SYS_io_uring_setup as u32, "deny"));
    ops.extend(socket_dispatch(sockets, "deny"));
    ops.extend([Ret(libc::SECCOMP_RET_ALLOW), Label("deny"), Ret(deny)]);
    assemble(&ops)
}

/// Installs a seccomp program on the calling thread (with `no_new_privs`
/// already set). Only system calls: safe between `fork` and `exec`.
///
/// # Safety
/// `filter` outlives the call (the kernel copies it).
pub(super) unsafe fn install(filter: &[libc::sock_filter]) -> std::io::Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What python3 gets per socket kind: `ok` or the errno.
    fn sockets(filter: Option<Vec<libc::sock_filter>>) -> String {
        let script = "import socket\n\
            for name, fam, kind, proto in [('tcp', socket.AF_INET, socket.SOCK_STREAM, 0),\n\
                                    ('tcp6', socket.AF_INET6, socket.SOCK_STREAM | socket.SOCK_CLOEXEC, 6),\n\
                                    ('udp', socket.AF_INET, socket.SOCK_DGRAM, 0),\n\
                                    ('sctp', socket.AF_INET, socket.SOCK_STREAM, 132),\n\
                                    ('unix', socket.AF_UNIX, socket.SOCK_STREAM, 0),\n\
                                    ('packet', 17, socket.SOCK_DGRAM, 0)]:\n\
            \x20   try:\n\
            \x20       socket.socket(fam, kind, proto).close(); print(name, 'ok')\n\
            \x20   except OSError as e:\n\
            \x20       print(name, e.errno)\n\
            try:\n\
            \x20   s = socket.socket(); s.setblocking(False)\n\
            \x20   s.sendto(b'x', 0x20000000, ('127.0.0.1', 9)); print('fastopen ok')\n\
            except OSError as e:\n\
            \x20   print('fastopen', e.errno)\n";
        super::super::test_support::python_under(filter, script, false)
    }

    #[test]
    fn off_refuses_every_ip_socket_and_the_proxy_filter_all_but_tcp() {
        let e = libc::EPERM;
        let off = sockets(Some(socket_filter(Sockets::Off)));
        assert_eq!(
            off,
            format!("tcp {e}\ntcp6 {e}\nudp {e}\nsctp {e}\nunix ok\npacket {e}\nfastopen {e}\n")
        );
        let proxy = sockets(Some(socket_filter(Sockets::Proxy)));
        assert!(
            proxy.starts_with(&format!(
                "tcp ok\ntcp6 ok\nudp {e}\nsctp {e}\nunix ok\npacket {e}\nfastopen {e}\n"
            )),
            "{proxy}"
        );
        // Without a filter (the control) TCP and UDP open.
        let none = sockets(None);
        assert!(none.starts_with("tcp ok\ntcp6 ok\nudp ok\n"), "{none}");
    }
}
