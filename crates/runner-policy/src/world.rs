//! One readable world (issue 73, item 5): what a command may read outside
//! the task's own folders, the same for the gate and the wall.
//!
//! - **Readable:** the system and toolchain trees (`/usr`, `/lib*`, `/bin`,
//!   `/sbin`, `/etc`, `/opt`, `/nix/store`, `/snap`), the files that only
//!   describe the machine (`/proc/cpuinfo`, `/etc/os-release` ...), and the
//!   devices that hold nothing (`/dev/null`, `/dev/zero`, `/dev/urandom`,
//!   `/dev/random`, `/dev/full`).
//! - **Never:** the machine's secrets inside those trees ([`SECRETS`]:
//!   `/etc/shadow`, `/etc/sudoers`, `/etc/ssh` with its host keys,
//!   `/etc/ssl/private` ...), the home folder (`~`), other users' files,
//!   other processes' `/proc` folders.
//!
//! The gate decides a visible read of the world like a read in the
//! workspace (a deny rule still refuses it; nothing else needs a rule of
//! its own), and any other read outside the workspace by an absolute
//! allow rule only. The wall (Landlock, in the runner's
//! `contain::linux::landlock`) keeps commands out of the home folder and
//! [`SECRETS`], whoever reads (inline code too), and its ptrace scope
//! keeps them out of other processes' `/proc/PID/environ` and `mem`.

/// Trees any command may read.
pub const READABLE_TREES: &[&str] = &[
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/bin",
    "/sbin",
    "/etc",
    "/opt",
    "/nix/store",
    "/snap",
];

/// The machine's secrets, beneath [`READABLE_TREES`]: never readable.
pub const SECRETS: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
    "/etc/ssl/private",
    "/etc/security/opasswd",
    "/etc/krb5.keytab",
    "/etc/wireguard",
    "/etc/NetworkManager/system-connections",
    "/etc/letsencrypt",
    "/etc/docker",
    "/etc/kubernetes",
    "/etc/rancher",
];

/// Single files that only describe the machine (its processors, memory,
/// kernel and distribution), and the devices that hold nothing.
pub const MACHINE_FILES: &[&str] = &[
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/version",
    "/proc/loadavg",
    "/proc/uptime",
    "/proc/stat",
    "/sys/fs/cgroup/cpu.max",
    "/sys/fs/cgroup/memory.max",
    "/sys/devices/system/cpu/online",
    "/dev/null",
    "/dev/zero",
    "/dev/urandom",
    "/dev/random",
    "/dev/full",
];

/// Whether `path` (absolute, normalised; `~/...` is the home folder) lies
/// in the readable world: `tree`, it and everything beneath it.
pub fn readable(path: &str, tree: bool) -> bool {
    if !path.starts_with('/') {
        return false;
    }
    if MACHINE_FILES.contains(&path) {
        return !tree;
    }
    let beneath = |root: &str| {
        path.strip_prefix(root)
            .is_some_and(|r| r.is_empty() || r.starts_with('/'))
    };
    if !READABLE_TREES.iter().any(|r| beneath(r)) {
        return false;
    }
    // Neither a secret nor, for a tree, a folder holding one.
    !SECRETS.iter().any(|s| {
        beneath(s)
            || (tree
                && s.strip_prefix(path)
                    .is_some_and(|r| r.starts_with('/') || path == "/"))
    })
}

/// Whether `path` names the home folder or lies in it (`~`, `~/x`), with
/// no `..` that could lead out of it.
pub fn in_home(path: &str) -> bool {
    (path == "~" || path.starts_with("~/")) && !path.split('/').any(|s| s == "..")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_trees_are_readable_and_their_secrets_are_not() {
        for p in [
            "/usr/lib/python3.12/json/__init__.py",
            "/etc/os-release",
            "/etc/nginx/nginx.conf",
            "/opt/hostedtoolcache/node",
            "/dev/zero",
            "/proc/cpuinfo",
        ] {
            assert!(readable(p, false), "{p}");
        }
        assert!(readable("/usr", true));
        assert!(readable("/etc/nginx", true));
        for p in [
            "/etc/shadow",
            "/etc/ssh/ssh_host_ed25519_key",
            "/etc/sudoers.d/runner",
            "/etc/ssl/private/x.key",
            "/root/.ssh/id_rsa",
            "/home/runner/.aws/credentials",
            "/proc/1/environ",
            "/dev/sda",
            "/usrx/a",
            "~/.ssh/id_rsa",
            "/tmp/x",
        ] {
            assert!(!readable(p, false), "{p}");
        }
        // A tree that holds a secret is not readable as a whole.
        assert!(!readable("/etc", true));
        assert!(!readable("/etc/ssl", true));
        assert!(!readable("/dev/zero", true));
    }
}
