//! What the unit tests of the seccomp programs share: a confinement of one
//! program, and a Python script run under it.

use super::Confinement;
use crate::contain::limits::Rlimits;

impl Confinement {
    /// Only a seccomp program (the tests of the programs).
    pub(crate) fn with_filter(filter: Vec<libc::sock_filter>) -> Self {
        Self {
            ruleset: None,
            filter,
            rlimits: Rlimits::default(),
            description: String::new(),
            hides: false,
            supervisor: None,
            pids: None,
            network_off: false,
            drops_ptrace: false,
            keep_caps: 0,
            privileges: Vec::new(),
            walls_signals: false,
            private_tmp: None,
        }
    }
}

/// What `python3 -c script` prints, under `filter` (none: as it is), in a
/// process group of its own when `own_group` (as a command's); it must
/// succeed.
pub(super) fn python_under(
    filter: Option<Vec<libc::sock_filter>>,
    script: &str,
    own_group: bool,
) -> String {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new("python3");
    cmd.args(["-c", script]);
    if own_group {
        cmd.process_group(0);
    }
    if let Some(f) = filter {
        let c = Confinement::with_filter(f);
        // SAFETY: `apply` makes system calls only.
        unsafe { cmd.pre_exec(move || c.apply()) };
    }
    let out = cmd.output().expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
