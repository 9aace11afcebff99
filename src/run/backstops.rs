//! The backstops a run holds (see `runner_policy::Backstops`): what the
//! copy left out for the policy, whether Landlock confines commands and no
//! daemon can act for them outside it (the supervisor's Unix-socket rule
//! where it runs, a probe of the known daemons' sockets where not), and
//! the network switch.

use runner_policy::{Backstops, PolicySet};

use crate::contain::Confinement;
use crate::contain::daemons::reachable_daemon_sockets;
use crate::workspace::IsolatedWorkspace;

/// The backstops of a run under `policy` whose copy is `iso` (made hiding
/// what the policy denies reading) and whose commands are confined by
/// `confine`; what they rest on is added to the transcript's sandbox
/// `note`. The daemon sockets are probed only where Landlock confines.
pub(crate) fn run_backstops(
    policy: &PolicySet,
    iso: &IsolatedWorkspace,
    confine: Option<&Confinement>,
    network: bool,
    note: &mut String,
) -> Backstops {
    if !iso.hidden().is_empty() {
        note.push_str(&format!(
            "; {} path(s) the policy denies reading left out of the copy{}",
            iso.hidden().len(),
            match iso.hidden_tracked().len() {
                0 => String::new(),
                n => format!(" ({n} tracked by git: readable through its objects)"),
            }
        ));
    }
    let landlock = confine.is_some_and(Confinement::confines_writes);
    // With the supervisor, no Unix socket outside the task is reachable,
    // whatever a probe would find; without it, the known daemons' sockets
    // are probed.
    let supervised = confine.is_some_and(Confinement::supervises);
    let daemons = if landlock && !supervised {
        reachable_daemon_sockets()
    } else {
        Vec::new()
    };
    if !daemons.is_empty() {
        let list: Vec<String> = daemons.iter().map(|p| p.display().to_string()).collect();
        note.push_str(&format!(
            "; no backstop for the policy: commands can reach a daemon that acts outside the sandbox ({})",
            list.join(", ")
        ));
    }
    let confined = landlock && daemons.is_empty();
    // The reads backstop is for the policy's own read denies: a tracked
    // file that only the built-in credentials layer hid does not weaken it.
    let tracked_by_rules = iso
        .hidden_tracked()
        .iter()
        .any(|rel| policy.rules_deny_reading(rel));
    Backstops {
        reads: confine.is_some_and(|c| c.hides) && !tracked_by_rules,
        edits: true,
        confined,
        network_off: confined && !network,
        exec: confined && confine.is_some_and(Confinement::supervises_exec),
    }
}
