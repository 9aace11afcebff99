//! Large results go to a file: the model gets a preview, the path and how
//! to page through it.
//!
//! A result longer than the tool's `max_result_chars` would flood the model's
//! context. The whole text is written to the task's output folder and the
//! model gets a preview, the file's path and how to page through it with
//! `read_file`. `read_file` itself is exempt, so reading a spilled file can
//! never spill again.

use std::path::Path;

use super::output::ToolOutput;
use crate::workspace::atomic_write_str;

/// The default `max_result_chars` of a tool.
pub const DEFAULT_MAX_RESULT_CHARS: usize = 30_000;
const PREVIEW_CHARS: usize = 2_000;

/// Spills `output.content` to `dir/<tool>-<seq>.txt` when it is longer than
/// `max` characters, replacing it with a preview and directions.
pub fn spill_if_large(
    output: &mut ToolOutput,
    max: Option<usize>,
    dir: Option<&Path>,
    tool: &str,
    seq: u64,
) -> std::io::Result<()> {
    let (Some(max), Some(dir)) = (max, dir) else {
        return Ok(());
    };
    let total_chars = output.content.chars().count();
    if total_chars <= max {
        return Ok(());
    }
    let path = dir.join(format!("{tool}-{seq}.txt"));
    atomic_write_str(&path, &output.content)?;
    let lines = output.content.lines().count();
    let preview: String = output.content.chars().take(PREVIEW_CHARS).collect();
    output.content = format!(
        "The result is too long to show here ({total_chars} characters, {lines} lines). \
         It was saved in full to {path}.\n\
         Read it in pages with read_file, e.g. {{\"file_path\": \"{path}\", \"offset\": 0, \"limit\": 500}}, \
         or search it with more specific arguments.\n\n\
         Preview (first {PREVIEW_CHARS} characters):\n{preview}",
        path = path.display()
    );
    let mut meta = match std::mem::take(&mut output.metadata) {
        serde_json::Value::Object(m) => m,
        serde_json::Value::Null => Default::default(),
        other => {
            let mut m = serde_json::Map::new();
            m.insert("data".into(), other);
            m
        }
    };
    meta.insert(
        "spilled_to".into(),
        serde_json::Value::String(path.display().to_string()),
    );
    meta.insert("spilled_chars".into(), total_chars.into());
    output.metadata = serde_json::Value::Object(meta);
    Ok(())
}
