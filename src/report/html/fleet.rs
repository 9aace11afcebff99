//! A fleet run's report (`--repos`) opens with its repositories: each
//! with its URL and ref, the commit its tasks ran on, how many passed,
//! what they changed and cost, the branch `--push` pushed, and a link to
//! its first task.

use std::fmt::Write as _;

use super::text::esc;
use crate::report::money::cost;
use crate::report::transcript::Transcript;

/// The repositories' table; empty for a run that is not a fleet's.
pub fn repositories(tasks: &[(&Transcript, &str)]) -> String {
    let ts: Vec<&Transcript> = tasks.iter().map(|(t, _)| *t).collect();
    let Some(groups) = crate::report::repositories::group(&ts) else {
        return String::new();
    };
    let green = groups.iter().filter(|g| g.green()).count();
    let mut h = format!(
        "<h2>{green}/{} repositories passed</h2>\n<table class=\"overview\"><thead><tr><th>repository</th><th>commit</th><th>tasks passed</th><th>changed files</th><th>cost</th><th>pushed</th></tr></thead><tbody>\n",
        groups.len()
    );
    for g in &groups {
        let status = if g.green() { "passed" } else { "failed" };
        let pushed = g.repo.pushed.as_ref().map_or(String::new(), |p| {
            format!("<code>{}</code>", esc(&p.branch))
        });
        let _ = writeln!(
            h,
            "<tr><td><a href=\"#task-{}\">{}</a></td><td><code>{}</code></td><td><span class=\"badge {status}\">{}/{}</span></td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{pushed}</td></tr>",
            g.tasks[0],
            esc(&g.name()),
            esc(g.commit()),
            g.passed,
            g.tasks.len(),
            g.changed,
            esc(&cost(g.cost)),
        );
    }
    h.push_str("</tbody></table>\n");
    h
}
