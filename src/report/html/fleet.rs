//! A fleet run's report (`--repos`) opens with its repositories: each
//! with its URL and ref, the commit its tasks ran on, how many passed,
//! what they changed and cost, the branch `--push` pushed, and a link to
//! its first task.

use std::fmt::Write as _;

use super::text::esc;
use crate::report::summary::cost;
use crate::report::transcript::{OutcomeStatus, Transcript};

/// The repositories' table; empty for a run that is not a fleet's.
pub fn repositories(tasks: &[(&Transcript, &str)]) -> String {
    let mut rows: Vec<(&runner_output::Repository, Vec<(usize, &Transcript)>)> = Vec::new();
    for (i, (t, _)) in tasks.iter().enumerate() {
        let Some(r) = &t.repository else {
            return String::new();
        };
        match rows.iter_mut().find(|(x, _)| x.folder == r.folder) {
            Some((_, v)) => v.push((i, t)),
            None => rows.push((r, vec![(i, t)])),
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    let green = rows
        .iter()
        .filter(|(_, ts)| {
            ts.iter()
                .all(|(_, t)| t.outcome.status == OutcomeStatus::Passed)
        })
        .count();
    let mut h = format!(
        "<h2>{green}/{} repositories passed</h2>\n<table class=\"overview\"><thead><tr><th>repository</th><th>commit</th><th>tasks passed</th><th>changed files</th><th>cost</th><th>pushed</th></tr></thead><tbody>\n",
        rows.len()
    );
    for (r, ts) in &rows {
        let passed = ts
            .iter()
            .filter(|(_, t)| t.outcome.status == OutcomeStatus::Passed)
            .count();
        let spent: Option<f64> = ts.iter().map(|(_, t)| t.usage.cost_usd).sum();
        let name = match &r.git_ref {
            Some(g) => format!("{}@{g}", r.url),
            None => r.url.clone(),
        };
        let status = if passed == ts.len() {
            "passed"
        } else {
            "failed"
        };
        let _ = writeln!(
            h,
            "<tr><td><a href=\"#task-{}\">{}</a></td><td><code>{}</code></td><td><span class=\"badge {status}\">{passed}/{}</span></td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            ts[0].0,
            esc(&name),
            esc(r
                .commit
                .as_deref()
                .map_or("not fetched", |c| &c[..c.len().min(12)])),
            ts.len(),
            ts.iter().map(|(_, t)| t.changes.len()).sum::<usize>(),
            esc(&cost(spent)),
            r.pushed.as_ref().map_or(String::new(), |p| format!(
                "<code>{}</code>",
                esc(&p.branch)
            ))
        );
    }
    h.push_str("</tbody></table>\n");
    h
}
