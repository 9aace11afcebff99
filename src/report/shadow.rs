//! A shadow policy's changes (`--shadow-policy`) as `summary.md` and
//! `report.html` show them: the calls whose decision the candidate would
//! change, newly denied first, each with both rules.

use crate::report::Transcript;
use runner_output::ShadowChange;

/// Most changed calls listed per task (all are in the transcript).
pub(crate) const SHOWN: usize = 50;

/// Task `t`'s changed calls, a line each (see
/// [`runner_output::ToolCallRecord::shadow_line`]), newly denied first.
pub(crate) fn changes(t: &Transcript) -> Vec<(ShadowChange, String)> {
    let mut out: Vec<(ShadowChange, String)> = t
        .tool_calls
        .iter()
        .filter_map(|c| Some((c.shadow_change()?, c.shadow_line()?)))
        .collect();
    out.sort_by_key(|(k, _)| *k != ShadowChange::NewlyDenied);
    out
}

/// The summary's section: the counts over the run, then each task's
/// changed calls; empty when no call would change (or no shadow ran).
pub(crate) fn summary_section(transcripts: &[&Transcript]) -> String {
    let denied: u32 = transcripts
        .iter()
        .map(|t| t.counts.shadow_newly_denied)
        .sum();
    let allowed: u32 = transcripts
        .iter()
        .map(|t| t.counts.shadow_newly_allowed)
        .sum();
    if denied + allowed == 0 {
        return String::new();
    }
    let mut s = format!(
        "\n### Shadow policy\n\nThe shadow policy would deny {denied} call(s) the run allowed, and allow {allowed} it denied (not enforced).\n\n"
    );
    for t in transcripts {
        let lines = changes(t);
        if lines.is_empty() {
            continue;
        }
        s.push_str(&format!("{}:\n\n", t.task.replace('|', "\\|")));
        for (k, line) in lines.iter().take(SHOWN) {
            s.push_str(&format!("- {}: {}\n", k.as_str(), line.replace('`', "'")));
        }
        if lines.len() > SHOWN {
            s.push_str(&format!("- ... and {} more\n", lines.len() - SHOWN));
        }
        s.push('\n');
    }
    s
}
