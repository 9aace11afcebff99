//! summary.md: a table of tasks and outcomes, then per task the first
//! lines of its answer, its denied calls with their rules and its diff
//! folded, for people and for `$GITHUB_STEP_SUMMARY`.
//!
//! GitHub refuses a step summary over 1 MiB, so the summary is kept under
//! [`MAX_BYTES`]: diffs share what the table and answers leave, each cut
//! with a note saying where the whole one is.

use super::transcript::{OutcomeStatus, Transcript};
use crate::engine::CallStatus;

/// Under GitHub's 1 MiB limit for a step summary, with room to spare.
pub const MAX_BYTES: usize = 1_000_000;
/// Lines of the final answer shown.
const ANSWER_LINES: usize = 8;
/// Denied calls listed per task.
const DENIED_SHOWN: usize = 20;

fn icon(s: OutcomeStatus) -> &'static str {
    match s {
        OutcomeStatus::Passed => "✅ passed",
        OutcomeStatus::Failed => "❌ failed",
        OutcomeStatus::Error => "💥 error",
        OutcomeStatus::Cancelled => "⏹ cancelled",
        OutcomeStatus::Conflict => "⚠️ conflict",
        OutcomeStatus::Skipped => "⏭ skipped",
        OutcomeStatus::Timeout => "⏱ timeout",
    }
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

use super::money::cost;

/// The lines a diff adds and removes (its `+++`/`---` headers left out).
pub(crate) fn added_removed<'a>(lines: impl IntoIterator<Item = &'a str>) -> (usize, usize) {
    let (mut added, mut removed) = (0, 0);
    for l in lines {
        if l.starts_with('+') && !l.starts_with("+++") {
            added += 1;
        } else if l.starts_with('-') && !l.starts_with("---") {
            removed += 1;
        }
    }
    (added, removed)
}

/// A fence that no line of `text` closes early.
fn fence(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

/// `text` cut to at most `max` bytes at a line end, and how many lines
/// were left out.
fn cut_lines(text: &str, max: usize) -> (&str, usize) {
    if text.len() <= max {
        return (text, 0);
    }
    let end = text[..max].rfind('\n').map_or(0, |i| i + 1);
    (&text[..end], text[end..].lines().count())
}

/// The head of one task's section: its answer and denied calls.
fn task_head(t: &Transcript) -> String {
    let mut s = format!("### {} {}\n\n", icon(t.outcome.status), cell(&t.task));
    let answer: Vec<&str> = t.final_answer.lines().take(ANSWER_LINES).collect();
    if !answer.is_empty() {
        let text = answer.join("\n");
        let more = t.final_answer.lines().count() - answer.len();
        let f = fence(&text);
        s.push_str(&format!("{f}text\n{text}\n{f}\n"));
        if more > 0 {
            s.push_str(&format!("({more} more line(s) in the transcript)\n"));
        }
        s.push('\n');
    }
    let denied: Vec<_> = t
        .tool_calls
        .iter()
        .filter(|c| c.status == CallStatus::Denied)
        .collect();
    if !denied.is_empty() {
        s.push_str(&format!("Denied calls ({}):\n\n", denied.len()));
        for c in denied.iter().take(DENIED_SHOWN) {
            let d = c.decision.as_deref();
            let what = d
                .and_then(denied_signature)
                .map_or_else(|| c.tool.clone(), ToString::to_string);
            let by = match d {
                Some(d) => match (&d.rule, &d.policy) {
                    (Some(rule), Some(p)) => format!("`{}` ({})", cell(rule), cell(p)),
                    (Some(rule), None) => format!("`{}`", cell(rule)),
                    (None, Some(p)) => format!("the default of {}", cell(p)),
                    (None, None) => cell(d.reason.as_deref().unwrap_or("the workspace boundary")),
                },
                None => "(refused before the policy)".into(),
            };
            s.push_str(&format!(
                "- turn {}: `{}` denied by {by}\n",
                c.turn,
                cell(&what).replace('`', "'")
            ));
        }
        if denied.len() > DENIED_SHOWN {
            s.push_str(&format!("- ... and {} more\n", denied.len() - DENIED_SHOWN));
        }
        s.push('\n');
    }
    let by_sandbox = t.sandbox_refusals();
    if !by_sandbox.is_empty() {
        s.push_str(&format!(
            "Refused by the sandbox ({}):\n\n",
            by_sandbox.len()
        ));
        for (turn, r) in by_sandbox.iter().take(DENIED_SHOWN) {
            s.push_str(&format!("- turn {turn}: {}\n", cell(r)));
        }
        if by_sandbox.len() > DENIED_SHOWN {
            s.push_str(&format!(
                "- ... and {} more\n",
                by_sandbox.len() - DENIED_SHOWN
            ));
        }
        s.push('\n');
    }
    if let Some(seen) = t
        .canaries
        .as_ref()
        .map(|c| &c.seen)
        .filter(|s| !s.is_empty())
    {
        s.push_str(&format!("Canaries seen ({}):\n\n", seen.len()));
        for c in seen.iter().take(DENIED_SHOWN) {
            let how = if c.moved {
                "on its way out, refused"
            } else {
                "read by the model"
            };
            s.push_str(&format!(
                "- `{}` {how}: {}\n",
                cell(&c.canary),
                cell(&c.seen_in)
            ));
        }
        s.push('\n');
    }
    let refused: Vec<_> = t.connections.iter().filter(|c| !c.allowed).collect();
    if !refused.is_empty() {
        s.push_str(&format!("Connections refused ({}):\n\n", refused.len()));
        for c in refused.iter().take(DENIED_SHOWN) {
            let by = match (&c.rule, &c.policy) {
                (Some(rule), Some(p)) => format!("`{}` ({})", cell(rule), cell(p)),
                (Some(rule), None) => format!("`{}`", cell(rule)),
                _ => cell(&c.reason),
            };
            s.push_str(&format!(
                "- {}: `{}:{}` refused by {by}\n",
                c.via.as_str(),
                cell(&c.host).replace('`', "'"),
                c.port
            ));
        }
        if refused.len() > DENIED_SHOWN {
            s.push_str(&format!(
                "- ... and {} more\n",
                refused.len() - DENIED_SHOWN
            ));
        }
        s.push('\n');
    }
    // What happened with the model: resumptions and fallback switches.
    if t.resumes > 0 || !t.model_switches.is_empty() {
        if t.resumes > 0 {
            s.push_str(&format!(
                "- resumed {} time(s) with `--resume`: turns, calls and cost include the earlier runs'\n",
                t.resumes
            ));
        }
        for sw in &t.model_switches {
            s.push_str(&format!(
                "- turn {}: `{}` failed ({}); went on with `{}`\n",
                sw.turn,
                cell(&sw.from),
                sw.class.as_str(),
                cell(&sw.to)
            ));
        }
        s.push('\n');
    }
    if !t.violations.is_empty() {
        s.push_str(&format!(
            "Changes dropped: the policy denies editing these paths ({}):\n\n",
            t.violations.len()
        ));
        for v in t.violations.iter().take(DENIED_SHOWN) {
            s.push_str(&format!(
                "- `{}` ({}) by `{}` ({})\n",
                cell(&v.path).replace('`', "'"),
                v.change.as_str(),
                cell(&v.rule),
                cell(&v.policy)
            ));
        }
        s.push('\n');
    }
    s
}

/// The diff of one task, folded, cut to `budget` bytes.
fn diff_section(t: &Transcript, diff: &str, budget: usize) -> String {
    let mut s = String::new();
    if !diff.is_empty() {
        let (added, removed) = added_removed(diff.lines());
        let (shown, left) = cut_lines(diff, budget);
        let f = fence(shown);
        s.push_str(&format!(
            "<details><summary>changes.diff: {} file(s), +{added} -{removed}</summary>\n\n{f}diff\n{shown}{}{f}\n",
            t.changes.len(),
            if shown.ends_with('\n') || shown.is_empty() { "" } else { "\n" },
        ));
        if left > 0 {
            s.push_str(&format!(
                "\n({left} more line(s): the whole diff is in {}/changes.diff)\n",
                cell(&t.task)
            ));
        }
        s.push_str("\n</details>\n\n");
    }
    if let Some(cut) = &t.diff_cut {
        s.push_str(&format!("{}\n\n", diff_cut_note(cut)));
    }
    s
}

/// What a `changes.diff` cut to its bound left out, in a sentence.
pub(crate) fn diff_cut_note(cut: &runner_output::DiffCut) -> String {
    let files: Vec<String> = (cut.files.iter().take(10))
        .map(|f| {
            format!(
                "`{}` ({}, {} bytes)",
                f.path.replace('`', "'"),
                f.why,
                f.bytes
            )
        })
        .collect();
    format!(
        "changes.diff was cut to --max-diff-bytes {} (the whole diff is {} bytes): {} file(s) left out, their headers kept: {}{}; --apply applies the whole change.",
        cut.limit_bytes,
        cut.whole_bytes,
        cut.files.len(),
        files.join(", "),
        if cut.files.len() > 10 { ", ..." } else { "" }
    )
}

/// Renders the summary of a run: the table, then each task with its diff
/// (`changes.diff`'s text).
pub fn render(tasks: &[(&Transcript, &str)]) -> String {
    let transcripts: Vec<&Transcript> = tasks.iter().map(|(t, _)| *t).collect();
    let mut s = repository_table(&transcripts);
    s.push_str(&render_table(&transcripts));
    if let Some(m) = super::matrix::group(&transcripts) {
        s.push_str(&super::matrix::summary_table(&m));
    }
    if let Some(groups) = super::repeats::group(&transcripts) {
        s.push_str(&super::repeats::summary_table(&groups));
    }
    s.push_str(&super::shadow::summary_section(&transcripts));
    // Diffs share what the table and the heads leave (with room for
    // each diff's own lines around it).
    let heads: Vec<String> = transcripts.iter().map(|t| task_head(t)).collect();
    let with_diffs = tasks.iter().filter(|(_, d)| !d.is_empty()).count().max(1);
    let fixed = s.len() + heads.iter().map(|h| h.len() + 200).sum::<usize>();
    let diff_budget = MAX_BYTES.saturating_sub(fixed) / with_diffs;
    s.push('\n');
    for ((t, diff), head) in tasks.iter().zip(heads) {
        s.push_str(&head);
        s.push_str(&diff_section(t, diff, diff_budget));
    }
    if s.len() > MAX_BYTES {
        // Thousands of tasks: the sections themselves pass the limit.
        let note = "\n(summary.md cut at 1 MB, GitHub's limit; every task's transcript and diff are in the run's output folder)\n";
        let (kept, _) = cut_lines(&s, MAX_BYTES - note.len());
        s = format!("{kept}{note}");
    }
    s
}

/// For a fleet run (`--repos`), a row per repository: its tasks passed,
/// files changed and cost; nothing otherwise.
fn repository_table(transcripts: &[&Transcript]) -> String {
    let Some(groups) = super::repositories::group(transcripts) else {
        return String::new();
    };
    let green = groups.iter().filter(|g| g.green()).count();
    let mut s = format!(
        "## runner: {green}/{} repositories passed\n\n| repository | commit | tasks passed | changed files | cost |\n|---|---|---:|---:|---:|\n",
        groups.len()
    );
    for g in &groups {
        s.push_str(&format!(
            "| {} | {} | {}/{} | {} | {} |\n",
            cell(&g.name()),
            g.commit(),
            g.passed,
            g.tasks.len(),
            g.changed,
            cost(g.cost)
        ));
    }
    s.push('\n');
    s
}

/// The table of tasks and outcomes.
fn render_table(transcripts: &[&Transcript]) -> String {
    let passed = transcripts
        .iter()
        .filter(|t| t.outcome.status == OutcomeStatus::Passed)
        .count();
    let mut s = format!("## runner: {passed}/{} tasks passed\n\n", transcripts.len());
    let unstarted = transcripts
        .iter()
        .filter(|t| super::skipped_by_budget(t))
        .count();
    if unstarted > 0 {
        s.push_str(&format!(
            "⏭ {unstarted} of {} runs not started: the run's `--max-cost` was spent.\n\n",
            transcripts.len()
        ));
    }
    s.push_str(
        "| task | outcome | turns | tool calls | denied | changed files | tokens | cost | reason |\n",
    );
    s.push_str("|---|---|---:|---:|---:|---:|---:|---:|---|\n");
    for t in transcripts {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            cell(&t.task),
            icon(t.outcome.status),
            t.counts.turns,
            t.counts.tool_calls,
            t.counts.denied_calls,
            t.changes.len(),
            t.usage.total(),
            cost(t.usage.cost_usd),
            cell(&t.outcome.reason)
        ));
    }
    s
}

/// The signature a denial is about: the one its deny rule matches (`ls -la;
/// cat .env` is denied for `Read(.env)`, not for `Bash(ls -la)`), else the
/// first.
fn denied_signature(d: &runner_policy::Decision) -> Option<&runner_policy::Signature> {
    let pattern = d
        .rule
        .as_deref()
        .and_then(|r| r.strip_prefix("deny "))
        .and_then(|p| runner_policy::Pattern::parse(p).ok());
    pattern
        .and_then(|p| d.signatures.iter().find(|s| p.matches(s, true)))
        .or_else(|| d.signatures.first())
}
