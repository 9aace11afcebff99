//! `runner report OUT`: report.html written again from an output folder's
//! transcripts and diffs (an older run, a downloaded artifact).

use std::path::Path;

use super::merge::{Found, read_shard};
use super::{CliError, CliResult, Exit};
use crate::run::write_report_html;

pub fn report(out: &Path) -> CliResult {
    let mut found = read_shard(out)?;
    found.sort_by(|a, b| a.transcript.task.cmp(&b.transcript.task));
    let diffs: Vec<String> = found.iter().map(Found::diff).collect();
    let tasks: Vec<_> = found
        .iter()
        .zip(&diffs)
        .map(|(f, d)| (&f.transcript, d.as_str()))
        .collect();
    write_report_html(out, &tasks).map_err(|e| {
        CliError::Failed(format!(
            "writing {}: {e}",
            out.join("report.html").display()
        ))
    })?;
    eprintln!("wrote {}", out.join("report.html").display());
    Ok(Exit::Passed)
}
