//! `runner report OUT`: report.html written again from an output folder's
//! transcripts and diffs (an older run, a downloaded artifact).

use std::path::Path;

use super::merge::read_shard;
use super::{CliError, CliResult, Exit};
use crate::contain::redact;
use crate::report::html;
use crate::workspace::atomic_write_str;

pub fn report(out: &Path) -> CliResult {
    let mut found = read_shard(out).map_err(CliError::Invalid)?;
    found.sort_by(|a, b| a.transcript.task.cmp(&b.transcript.task));
    let tasks: Vec<_> = found
        .iter()
        .map(|f| {
            let diff = std::fs::read_to_string(f.dir.join("changes.diff")).unwrap_or_default();
            (&f.transcript, diff)
        })
        .collect();
    let path = out.join("report.html");
    atomic_write_str(&path, &redact(&html::render(&tasks)))
        .map_err(|e| CliError::Failed(format!("writing {}: {e}", path.display())))?;
    eprintln!("wrote {}", path.display());
    Ok(Exit::Passed)
}
