//! Daemons a confined command could ask to act for it.
//!
//! Landlock confines a command and its children, not a daemon it talks to:
//! a container engine's socket (`docker run -v /:/host ...`) or a session
//! bus that starts units (`systemd-run --user ...`) runs work outside the
//! sandbox. Connecting to a Unix socket by path is not something Landlock
//! decides, so where such a socket is reachable the sandbox is not a
//! backstop the policy can count on (see `runner_policy::Backstops`), and
//! the transcript says why.

use std::path::{Path, PathBuf};

/// The daemon sockets this process could connect to (they exist, are
/// sockets and are writable to it).
pub fn reachable_daemon_sockets() -> Vec<PathBuf> {
    candidates()
        .into_iter()
        .filter(|p| is_writable_socket(p))
        .collect()
}

fn candidates() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = [
        "/var/run/docker.sock",
        "/run/docker.sock",
        "/run/podman/podman.sock",
        "/run/containerd/containerd.sock",
        "/run/buildkit/buildkitd.sock",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    let uid = crate::sys::uid();
    if uid == 0 {
        // Root may start system units over the system bus.
        out.push("/run/dbus/system_bus_socket".into());
    }
    let mut runtime: Vec<PathBuf> = vec![PathBuf::from(format!("/run/user/{uid}"))];
    runtime.extend(std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from));
    for dir in runtime {
        for name in ["bus", "docker.sock", "podman/podman.sock"] {
            out.push(dir.join(name));
        }
    }
    if let Some(host) = std::env::var_os("DOCKER_HOST")
        && let Some(path) = crate::sys::os_bytes(&host).strip_prefix(b"unix://")
    {
        out.push(PathBuf::from(crate::sys::os_from_bytes(path)));
    }
    out.sort();
    out.dedup();
    out
}

fn is_writable_socket(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    crate::sys::is_socket(&meta.file_type()) && crate::sys::may_write(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Root may start system units over the system bus: its socket is a
    /// daemon's for root only (a user's bus is in its runtime folder).
    #[test]
    fn the_system_bus_counts_for_root_only() {
        let bus = PathBuf::from("/run/dbus/system_bus_socket");
        assert_eq!(candidates().contains(&bus), crate::sys::uid() == 0);
        assert!(candidates().contains(&PathBuf::from("/var/run/docker.sock")));
    }

    #[test]
    fn a_listening_socket_is_reachable_and_a_plain_file_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("d.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        assert!(is_writable_socket(&sock));
        std::fs::write(dir.path().join("plain"), "").unwrap();
        assert!(!is_writable_socket(&dir.path().join("plain")));
        assert!(!is_writable_socket(&dir.path().join("missing")));
    }
}
