//! What `runner run` says last, on stderr (stdout keeps its one data
//! line, `N passed, M failed`): with `-q`, each failed task's one-line
//! reason and where the summary is, since nothing else said it; and on
//! exit 75, how to go on (`--resume`), as the last line.

use std::path::Path;

use super::Exit;
use crate::run::TaskResult;

/// The closing lines for `results` written to `out`, ending in `exit`.
pub(super) fn closing_lines(
    results: &[TaskResult],
    out: &Path,
    quiet: bool,
    exit: Exit,
) -> Vec<String> {
    let mut lines = Vec::new();
    if quiet {
        for r in results.iter().filter(|r| !r.passed()) {
            let o = &r.transcript.outcome;
            lines.push(format!(
                "runner: {} {}: {}",
                r.transcript.task,
                o.status.as_str(),
                o.reason
            ));
        }
        if !lines.is_empty() {
            lines.push(format!(
                "runner: details in {}",
                out.join("summary.md").display()
            ));
        }
    }
    if exit == Exit::Resumable {
        lines.push(format!(
            "runner: stopped before every task ended; `runner run --resume {} TASKS...` goes on from where it stopped",
            out.display()
        ));
    }
    lines
}

/// Prints the one task's answer on stdout: its JSON under an output
/// schema, else its final text.
pub(super) fn print_answer(results: &[crate::run::TaskResult]) {
    let Some(t) = results.first().map(|r| &r.transcript) else {
        return;
    };
    match &t.output {
        Some(v) => println!(
            "{}",
            serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
        ),
        None if !t.final_answer.trim().is_empty() => println!("{}", t.final_answer.trim_end()),
        None => {}
    }
}
