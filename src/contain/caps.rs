//! Capability names (`capabilities(7)`), for a task's
//! `sandbox: {capabilities: [{name, reason}]}`: what a root runner's
//! commands keep of the capabilities the sandbox otherwise drops.
//! Platform-neutral: the names are read everywhere, and only the Linux
//! sandbox has capabilities to keep.

/// The names, by number (`CAP_CHOWN` is 0).
const NAMES: [&str; 41] = [
    "CHOWN",
    "DAC_OVERRIDE",
    "DAC_READ_SEARCH",
    "FOWNER",
    "FSETID",
    "KILL",
    "SETGID",
    "SETUID",
    "SETPCAP",
    "LINUX_IMMUTABLE",
    "NET_BIND_SERVICE",
    "NET_BROADCAST",
    "NET_ADMIN",
    "NET_RAW",
    "IPC_LOCK",
    "IPC_OWNER",
    "SYS_MODULE",
    "SYS_RAWIO",
    "SYS_CHROOT",
    "SYS_PTRACE",
    "SYS_PACCT",
    "SYS_ADMIN",
    "SYS_BOOT",
    "SYS_NICE",
    "SYS_RESOURCE",
    "SYS_TIME",
    "SYS_TTY_CONFIG",
    "MKNOD",
    "LEASE",
    "AUDIT_WRITE",
    "AUDIT_CONTROL",
    "SETFCAP",
    "MAC_OVERRIDE",
    "MAC_ADMIN",
    "SYSLOG",
    "WAKE_ALARM",
    "BLOCK_SUSPEND",
    "AUDIT_READ",
    "PERFMON",
    "BPF",
    "CHECKPOINT_RESTORE",
];

/// Capabilities a task may not keep, and why: each would hand a command a
/// way past a wall the runner needs.
const NOT_KEPT: &[(&str, &str)] = &[
    (
        "SYS_PTRACE",
        "it reaches into other processes, the runner's among them",
    ),
    (
        "SETPCAP",
        "it would let a command give itself back what was dropped",
    ),
];

/// Capability `name`'s number (`NET_ADMIN`, `CAP_NET_ADMIN`, any case).
pub fn number(name: &str) -> Option<u32> {
    let upper = name.trim().to_ascii_uppercase();
    let bare = upper.strip_prefix("CAP_").unwrap_or(&upper);
    NAMES.iter().position(|n| *n == bare).map(|i| i as u32)
}

/// Capability `n`'s name.
pub fn name(n: u32) -> Option<&'static str> {
    NAMES.get(n as usize).copied()
}

/// Why a task may not keep capability `n`, if it may not.
pub fn not_kept(n: u32) -> Option<&'static str> {
    let name = name(n)?;
    NOT_KEPT
        .iter()
        .find(|(c, _)| *c == name)
        .map(|(_, why)| *why)
}

/// The closest name to `asked` (for an error's suggestion): within two
/// edits.
pub fn closest(asked: &str) -> Option<&'static str> {
    let upper = asked.trim().to_ascii_uppercase();
    let bare = upper.strip_prefix("CAP_").unwrap_or(&upper);
    NAMES
        .iter()
        .map(|n| (runner_policy::words::edit_distance(bare, n), *n))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_read_with_or_without_their_prefix_and_in_any_case() {
        assert_eq!(number("NET_ADMIN"), Some(12));
        assert_eq!(number("cap_net_admin"), Some(12));
        assert_eq!(number("CHECKPOINT_RESTORE"), Some(40));
        assert_eq!(number("NET_ADMINS"), None);
        assert_eq!(name(19), Some("SYS_PTRACE"));
        assert!(not_kept(19).is_some());
        assert!(not_kept(12).is_none());
        assert_eq!(closest("NETADMIN"), Some("NET_ADMIN"));
        assert_eq!(closest("NET_ADMN"), Some("NET_ADMIN"));
        assert_eq!(closest("cap_sys_chroo"), Some("SYS_CHROOT"));
        assert_eq!(closest("WHATEVER"), None);
    }
}
