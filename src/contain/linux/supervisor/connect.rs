//! The supervisor's connect decision: IP only to the runner's proxy (with
//! `network:` rules), Unix sockets only inside the task's writable folders,
//! abstract sockets never; the runner connects a copy of the command's
//! socket itself, so what it decided is what is connected.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::exe_path::{as_process_sees, named};
use super::memory::read_memory;
use super::procs::take_fd;
use super::rules::{Answer, IpRule, Rules};

/// Whether the notification still stands for a live call (so that what
/// was read belongs to it, not to a process that took its number).
pub(super) fn still_valid(listener: &OwnedFd, id: u64) -> bool {
    // SAFETY: the listener and an id.
    unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ID_VALID,
            &id,
        ) == 0
    }
}

/// Connects the command's socket (a copy of it) to `addr`; the call's
/// answer.
fn connect_for(tid: u32, fd: i32, addr: &[u8]) -> Answer {
    let sock = match take_fd(tid, fd) {
        Ok(s) => s,
        Err(e) => return Answer::Error(e.raw_os_error().unwrap_or(libc::EPERM)),
    };
    // SAFETY: `addr` holds a whole socket address of its length.
    let r = unsafe {
        libc::connect(
            sock.as_raw_fd(),
            addr.as_ptr() as *const libc::sockaddr,
            addr.len() as libc::socklen_t,
        )
    };
    if r == 0 {
        Answer::Value(0)
    } else {
        Answer::Error(
            io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO),
        )
    }
}

pub(super) fn decide_connect(
    req: &libc::seccomp_notif,
    listener: &OwnedFd,
    rules: &Rules,
) -> Answer {
    let fd = req.data.args[0] as i32;
    let len = (req.data.args[2] as usize).min(std::mem::size_of::<libc::sockaddr_storage>());
    if len < 2 {
        return Answer::Error(libc::EINVAL);
    }
    let Some(addr) = read_memory(req.pid, req.data.args[1], len) else {
        return Answer::Error(libc::EFAULT);
    };
    if !still_valid(listener, req.id) {
        return Answer::Error(libc::ENOENT);
    }
    let family = i32::from(u16::from_ne_bytes([addr[0], addr[1]]));
    match family {
        libc::AF_INET | libc::AF_INET6 => decide_ip(req, fd, &addr, rules),
        libc::AF_UNIX => decide_unix(req, fd, &addr, rules),
        // AF_UNSPEC (dissolving an association) and the rest: nothing is
        // reached by them.
        _ => Answer::Continue,
    }
}

/// The address and port of an IP socket address.
fn ip_of(addr: &[u8]) -> Option<std::net::SocketAddr> {
    let family = i32::from(u16::from_ne_bytes([addr[0], addr[1]]));
    let port = u16::from_be_bytes([*addr.get(2)?, *addr.get(3)?]);
    match family {
        libc::AF_INET => {
            let ip: [u8; 4] = addr.get(4..8)?.try_into().ok()?;
            Some((std::net::Ipv4Addr::from(ip), port).into())
        }
        libc::AF_INET6 => {
            let ip: [u8; 16] = addr.get(8..24)?.try_into().ok()?;
            Some((std::net::Ipv6Addr::from(ip), port).into())
        }
        _ => None,
    }
}

fn decide_ip(req: &libc::seccomp_notif, fd: i32, addr: &[u8], rules: &Rules) -> Answer {
    let IpRule::Proxy(port) = rules.ip else {
        // Any address: nothing to decide, whatever the call ends up using.
        return Answer::Continue;
    };
    let Some(to) = ip_of(addr) else {
        return Answer::Error(libc::EINVAL);
    };
    let loopback = match to.ip() {
        std::net::IpAddr::V4(v4) => v4 == std::net::Ipv4Addr::LOCALHOST,
        std::net::IpAddr::V6(v6) => v6.to_ipv4_mapped() == Some(std::net::Ipv4Addr::LOCALHOST),
    };
    if !loopback || to.port() != port {
        return rules.refuse(
            to.ip().to_string(),
            to.port(),
            format!("tcp {to} (only the runner's proxy, 127.0.0.1:{port})"),
        );
    }
    connect_for(req.pid, fd, addr)
}

fn decide_unix(req: &libc::seccomp_notif, fd: i32, addr: &[u8], rules: &Rules) -> Answer {
    let path = &addr[2..];
    if path.first().is_none_or(|b| *b == 0) {
        let name = String::from_utf8_lossy(&path[1.min(path.len())..])
            .trim_end_matches('\0')
            .to_string();
        return rules.refuse(format!("@{name}"), 0, "an abstract Unix socket".into());
    }
    let end = path.iter().position(|b| *b == 0).unwrap_or(path.len());
    let asked = Path::new(std::ffi::OsStr::from_bytes(&path[..end]));
    // The path as the command resolves it, not the runner: a relative one
    // from its folder, and `/proc/self` (or `/dev/fd`) as its own. The
    // folder is resolved; the last component is opened below, not followed.
    let view = rules.tmp.as_deref();
    let full = named(req.pid, None, asked, view);
    let full = match (full.parent(), full.file_name()) {
        (Some(dir), Some(name)) => match as_process_sees(req.pid, dir, view) {
            Some(dir) => dir.join(name),
            None => return Answer::Error(libc::ELOOP),
        },
        // `/` or a path ending in `..`: a folder, refused below.
        _ => full,
    };
    // The socket file itself, a last symlink not followed; where the
    // kernel says it is is what is decided.
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_NOFOLLOW)
        .open(&full)
    {
        Ok(f) => f,
        Err(e) => return Answer::Error(e.raw_os_error().unwrap_or(libc::ENOENT)),
    };
    let is_socket = file
        .metadata()
        .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_socket(&m.file_type()));
    let proc_path = format!("/proc/self/fd/{}", file.as_raw_fd());
    let at = std::fs::read_link(&proc_path).unwrap_or_default();
    if !is_socket || !rules.unix_within.iter().any(|d| at.starts_with(d)) {
        // Named by where it is (a path through `/proc/<pid>` says little).
        let shown = if at.as_os_str().is_empty() {
            &full
        } else {
            &at
        };
        return rules.refuse(
            shown.display().to_string(),
            0,
            format!(
                "unix {} (only sockets inside the task's folders)",
                shown.display()
            ),
        );
    }
    let mut sun = vec![0u8; 2 + proc_path.len() + 1];
    sun[..2].copy_from_slice(&(libc::AF_UNIX as u16).to_ne_bytes());
    sun[2..2 + proc_path.len()].copy_from_slice(proc_path.as_bytes());
    connect_for(req.pid, fd, &sun)
}
