//! Writing a run's files, each atomically.

use std::io::Write;
use std::path::Path;

use super::task::TaskResult;
use crate::contain::redact;
use crate::report::{Transcript, html, junit, summary};
use crate::workspace::{durable_write, durable_write_str};

/// The file beside a task's outputs that says `--apply` applied its
/// changes (`OUT/<task>/applied`, holding the workspace they went to).
pub const APPLIED: &str = "applied";

/// `OUT/<task>/transcript.json` and `OUT/<task>/changes.diff`.
pub fn write_task_outputs(out: &Path, r: &TaskResult) -> std::io::Result<()> {
    let dir = out.join(&r.transcript.task);
    std::fs::create_dir_all(&dir)?;
    // Tool results were redacted as they came; this catches the rest (the
    // model's own text, a diff that writes a secret into a file).
    let json = serde_json::to_string_pretty(&r.transcript).map_err(std::io::Error::other)?;
    durable_write(&dir.join("transcript.json"), redact(&json).as_bytes())?;
    durable_write_str(&dir.join("changes.diff"), &redact(&r.diff))?;
    // These outputs are not applied yet (whatever an earlier run applied).
    match std::fs::remove_file(dir.join(APPLIED)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    // output.json only for a valid answer; none left from an earlier run.
    let output = dir.join("output.json");
    match &r.transcript.output {
        Some(v) => {
            let json = serde_json::to_string_pretty(v).map_err(std::io::Error::other)?;
            durable_write(&output, redact(&json).as_bytes())?;
        }
        None => match std::fs::remove_file(&output) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        },
    }
    Ok(())
}

/// `OUT/junit.xml`, `OUT/summary.md`, `OUT/report.html` and the GitHub
/// step summary, from the results in memory.
pub fn write_run_outputs(out: &Path, results: &[TaskResult]) -> std::io::Result<()> {
    let tasks: Vec<(&Transcript, &str)> = results
        .iter()
        .map(|r| (&r.transcript, r.diff.as_str()))
        .collect();
    write_run_reports(out, &tasks)
}

/// `OUT/report.html` for tasks and their diffs.
pub fn write_report_html(out: &Path, tasks: &[(&Transcript, &str)]) -> std::io::Result<()> {
    durable_write_str(&out.join("report.html"), &redact(&html::render(tasks)))
}

/// The run-level reports from the tasks' transcripts and diffs (also used
/// to merge the outputs of several shards).
pub fn write_run_reports(out: &Path, tasks: &[(&Transcript, &str)]) -> std::io::Result<()> {
    std::fs::create_dir_all(out)?;
    let pairs: Vec<_> = tasks
        .iter()
        .map(|(t, _)| {
            let p = out.join(&t.task).join("transcript.json");
            (*t, p.display().to_string())
        })
        .collect();
    durable_write_str(&out.join("junit.xml"), &redact(&junit::render(&pairs)))?;
    let md = redact(&summary::render(tasks)).into_owned();
    write_report_html(out, tasks)?;
    durable_write_str(&out.join("summary.md"), &md)?;
    if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        f.write_all(md.as_bytes())?;
        f.write_all(b"\n")?;
    }
    Ok(())
}
