//! The backstops a run holds (see `runner_policy::Backstops`): what the
//! copy left out for the policy, what its git view shows of history, whether Landlock confines commands and no
//! daemon can act for them outside it (the supervisor's Unix-socket rule
//! where it runs, a probe of the known daemons' sockets where not), and
//! the network switch.

use runner_policy::Backstops;

use crate::contain::Confinement;
use crate::contain::daemons::reachable_daemon_sockets;
use crate::workspace::IsolatedWorkspace;

/// The backstops of a run whose copy is `iso` (made hiding what the
/// policy denies reading) and whose commands are confined by
/// `confine`; what they rest on is added to the transcript's sandbox
/// `note`. The daemon sockets are probed only where Landlock confines.
pub(crate) fn run_backstops(
    iso: &IsolatedWorkspace,
    confine: Option<&Confinement>,
    network: bool,
    note: &mut String,
) -> Backstops {
    if !iso.hidden().is_empty() {
        note.push_str(&format!(
            "; {} path(s) the policy denies reading left out of the copy",
            iso.hidden().len(),
        ));
    }
    for (folder, head, why) in iso.history_cut() {
        note.push_str(&format!(
            "; git history in the copy{} cut to one commit, HEAD's tree without the paths the policy denies reading ({why}; the real HEAD is {head})",
            if folder.is_empty() { String::new() } else { format!(" of {folder}") },
        ));
    }
    let exposed = iso.history_exposed();
    if let Some(why) = &exposed {
        note.push_str(&format!(
            "; no history backstop: git in the copy {why}; reads of history are decided strictly"
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
    // History is safe where every view holds no denied content and the
    // original (its object store with it) is unreadable to commands.
    let hides = confine.is_some_and(|c| c.hides);
    let history = hides && exposed.is_none();
    // Inline code could run a reader of history the analysis cannot see:
    // the reads backstop holds only where history is safe too.
    Backstops {
        reads: history,
        history,
        edits: true,
        confined,
        network_off: confined && !network,
        exec: confined && confine.is_some_and(Confinement::supervises_exec),
        private_tmp: landlock && confine.is_some_and(Confinement::has_private_tmp),
    }
}
