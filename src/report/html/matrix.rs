//! A run under several models (`--models`) opens with its tasks side by
//! side: rows the tasks, columns the models (see [`crate::report::matrix`]).

use std::fmt::Write as _;

use super::text::esc;
use crate::report::matrix::{cell_text, group, stats, totals};
use crate::report::transcript::Transcript;

/// The pivot table; empty for a run without `--models`.
pub fn pivot(tasks: &[(&Transcript, &str)]) -> String {
    let ts: Vec<&Transcript> = tasks.iter().map(|(t, _)| *t).collect();
    let Some(m) = group(&ts) else {
        return String::new();
    };
    let mut h = String::from(
        "<h2>Models side by side</h2>\n<table class=\"overview matrix\"><thead><tr><th>task</th>",
    );
    for v in &m.variants {
        let _ = write!(h, "<th><code>{}</code></th>", esc(v));
    }
    h.push_str("</tr></thead><tbody>\n");
    for r in &m.rows {
        let _ = write!(h, "<tr><td>{}</td>", esc(&r.task));
        for runs in &r.cells {
            let s = stats(runs);
            let status = match (s.passed, s.runs) {
                (_, 0) => "skipped",
                (p, n) if p == n => "passed",
                _ => "failed",
            };
            let _ = write!(
                h,
                "<td class=\"cell {status}\">{}</td>",
                esc(&cell_text(&s))
            );
        }
        h.push_str("</tr>\n");
    }
    let totals = totals(&m);
    h.push_str("<tr class=\"total\"><td>tasks passed</td>");
    for (tasks, _) in &totals {
        let _ = write!(h, "<td class=\"n\">{tasks}/{}</td>", m.rows.len());
    }
    h.push_str("</tr>\n<tr class=\"total\"><td>cost per passing run</td>");
    for (_, per_pass) in &totals {
        let c = per_pass.map_or("—".to_string(), crate::report::money::usd);
        let _ = write!(h, "<td class=\"n\">{}</td>", esc(&c));
    }
    h.push_str("</tr>\n</tbody></table>\n");
    h
}
