//! A run of `--repeat` or `--attempts` opens with its repeated tasks,
//! flaky ones first: passed, the pass rate, pass@k, and each attempt as a
//! mark that links to its section (see [`crate::report::repeats`]).

use std::fmt::Write as _;

use super::text::esc;
use crate::report::repeats::{group, pass_at, rows_and_ks};
use crate::report::transcript::{OutcomeStatus, Transcript};

/// The table; empty for a run without repeated tasks.
pub fn table(tasks: &[(&Transcript, &str)]) -> String {
    let ts: Vec<&Transcript> = tasks.iter().map(|(t, _)| *t).collect();
    let Some(groups) = group(&ts) else {
        return String::new();
    };
    let (rows, ks) = rows_and_ks(&groups);
    let mut h = String::from(
        "<h2>Repeated tasks</h2>\n<table class=\"overview repeats\"><thead><tr><th>task</th><th>passed</th><th>pass rate</th>",
    );
    for k in &ks {
        let _ = write!(h, "<th>pass@{k}</th>");
    }
    h.push_str("<th>flaky</th><th>attempts</th><th>turns (median, range)</th><th>cost (median)</th></tr></thead><tbody>\n");
    // Each attempt's section, by its place in the page.
    let section = |t: &Transcript| tasks.iter().position(|(u, _)| std::ptr::eq(*u, t));
    for r in rows {
        let (n, c) = (r.runs(), r.passed());
        let flaky = if r.flaky() { "flaky" } else { "" };
        let _ = write!(
            h,
            "<tr class=\"{flaky}\"><td>{}</td><td class=\"n\">{c}/{n}</td><td class=\"n\">{:.2}</td>",
            esc(&r.task),
            r.pass_rate()
        );
        for &k in &ks {
            let p = pass_at(n, c, k);
            if p.is_nan() {
                h.push_str("<td class=\"n\"></td>");
            } else {
                let _ = write!(h, "<td class=\"n\">{p:.2}</td>");
            }
        }
        let _ = write!(
            h,
            "<td>{}</td><td class=\"marks\">",
            if r.flaky() { "yes" } else { "no" }
        );
        for t in &r.attempts {
            let (mark, status) = match t.outcome.status {
                OutcomeStatus::Passed => ("✅", "passed"),
                _ => ("❌", "failed"),
            };
            let title = esc(&format!("{}: {}", t.task, t.outcome.reason));
            match section(t) {
                Some(i) => {
                    let _ = write!(
                        h,
                        "<a class=\"{status}\" href=\"#task-{i}\" title=\"{title}\">{mark}</a>"
                    );
                }
                None => {
                    let _ = write!(
                        h,
                        "<span class=\"{status}\" title=\"{title}\">{mark}</span>"
                    );
                }
            }
        }
        let (lo, hi) = r.turns_range();
        let _ = writeln!(
            h,
            "</td><td class=\"n\">{:.1} ({lo}-{hi})</td><td class=\"n\">{}</td></tr>",
            r.median_turns(),
            esc(&crate::report::money::cost(r.median_cost()))
        );
    }
    h.push_str("</tbody></table>\n");
    h
}
