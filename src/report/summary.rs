//! summary.md: a table of tasks and outcomes, for people and for
//! `$GITHUB_STEP_SUMMARY`.

use super::transcript::{OutcomeStatus, Transcript};

fn icon(s: OutcomeStatus) -> &'static str {
    match s {
        OutcomeStatus::Passed => "✅ passed",
        OutcomeStatus::Failed => "❌ failed",
        OutcomeStatus::Error => "💥 error",
        OutcomeStatus::Cancelled => "⏹ cancelled",
        OutcomeStatus::Conflict => "⚠️ conflict",
        OutcomeStatus::Skipped => "⏭ skipped",
    }
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// A cost in USD, or `unknown` (never 0 for a price nobody knows).
pub fn cost(c: Option<f64>) -> String {
    c.map_or_else(|| "unknown".into(), |c| format!("${c:.4}"))
}

/// Renders the summary of a run.
pub fn render(transcripts: &[&Transcript]) -> String {
    let passed = transcripts
        .iter()
        .filter(|t| t.outcome.status == OutcomeStatus::Passed)
        .count();
    let mut s = format!("## runner: {passed}/{} tasks passed\n\n", transcripts.len());
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
