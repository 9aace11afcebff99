//! read_file: a file's lines, numbered, in pages.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::path_signatures;
use crate::tools::{Description, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use runner_policy::{Family, Signature};

pub const DEFAULT_LIMIT: u64 = 2000;
const MAX_LINE_CHARS: usize = 2000;
/// How much of a file is read at first (whole, for most source files).
const PROBE: usize = 8192;

pub struct ReadFile;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Path of the file, relative to the workspace (or absolute inside it).
    pub file_path: String,
    /// Number of lines to skip before reading (0 = start at the first line).
    #[serde(default)]
    pub offset: Option<u64>,
    /// Maximum number of lines to return (default 2000).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100000))]
    pub limit: Option<u64>,
}

impl Tool for ReadFile {
    type Args = Args;

    fn name(&self) -> &str {
        "read_file"
    }

    fn description(&self) -> Description {
        Description::new("Reads a text file from the workspace and returns its lines, numbered from 1.")
            .long("Returns up to 2000 lines by default. Use offset and limit to page through long files. Lines longer than 2000 characters are cut.")
            .note("Paths are relative to the workspace root")
            .note("Read several files at once by calling read_file in parallel")
            .note("The output says how many lines remain and which offset continues")
            .example("Read a whole file", json!({"file_path": "src/main.rs"}))
            .example("Read lines 101-150", json!({"file_path": "src/main.rs", "offset": 100, "limit": 50}))
            .important("You must read a file before you edit or overwrite it")
    }

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    fn max_result_chars(&self) -> Option<usize> {
        None
    }

    fn validate(&self, args: &Args, ctx: &ToolContext) -> Result<(), ToolError> {
        if args.limit == Some(0) {
            return Err(ToolError::validation("limit must be at least 1"));
        }
        if ctx.is_spill_file(std::path::Path::new(&args.file_path)) {
            return Ok(());
        }
        ctx.resolve(&args.file_path)?;
        Ok(())
    }

    fn is_concurrency_safe(&self, _: &Args) -> bool {
        true
    }

    fn signatures(&self, args: &Args, ctx: &ToolContext) -> Vec<Signature> {
        if ctx.is_spill_file(std::path::Path::new(&args.file_path)) {
            // The runner's own result files: nothing of the user's is read.
            return vec![];
        }
        path_signatures(ctx, Family::Read, &args.file_path)
    }

    async fn call(&self, args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let shown = args.file_path.as_str();
        // Opened without blocking (a FIFO would wait for a writer forever),
        // then asked what it is: one path lookup for both.
        let (real, opened) = if ctx.is_spill_file(std::path::Path::new(shown)) {
            let real = std::path::PathBuf::from(shown);
            let f = crate::sys::open_nonblocking(&real);
            (real, f)
        } else {
            let real = ctx.resolve(shown)?.real;
            let f = ctx.workspace.open_read(&real);
            (real, f)
        };
        let (mut file, meta) = super::regular_file(opened, shown)?;
        // A file that fits is read whole here, in one `read` when its size
        // is known (not for /proc-like files, which report 0).
        let want = if meta.len() > 0 {
            (meta.len() as usize).min(PROBE)
        } else {
            PROBE
        };
        let mut probe = Vec::with_capacity(want);
        let n = read_up_to(&mut file, &mut probe, want).map_err(|e| super::io_error(e, shown))?;
        if super::looks_binary(&probe) {
            return Err(ToolError::validation(format!(
                "{shown} is a binary file ({} bytes); read_file shows text only",
                meta.len()
            )));
        }
        // The probe holds the whole file when the read stopped short or the
        // file's size fits; a larger file continues from the file.
        let whole = n < want || (meta.len() > 0 && meta.len() <= PROBE as u64);
        let rest: Box<dyn Read + Send> = if whole {
            Box::new(std::io::empty())
        } else {
            Box::new(file)
        };
        let reader = BufReader::new(std::io::Cursor::new(probe).chain(rest));
        let offset = args.offset.unwrap_or(0);
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
        let mut out = String::new();
        let mut total: u64 = 0;
        let mut shown_lines: u64 = 0;
        let mut cut_lines = 0;
        for line in reader.split(b'\n') {
            let line = line.map_err(|e| super::io_error(e, shown))?;
            total += 1;
            if total <= offset || shown_lines >= limit {
                continue;
            }
            shown_lines += 1;
            let text = String::from_utf8_lossy(&line);
            let text = text.strip_suffix('\r').unwrap_or(&text);
            let _ = write!(out, "{total:>6}\t");
            match text.char_indices().nth(MAX_LINE_CHARS) {
                Some((cut, _)) => {
                    cut_lines += 1;
                    out.push_str(&text[..cut]);
                    let _ = write!(out, "... [line cut at {MAX_LINE_CHARS} characters]");
                }
                None => out.push_str(text),
            }
            out.push('\n');
        }
        // `split` yields a last empty piece only when the file does not end
        // with a newline; a trailing newline adds none, which is what we want.
        ctx.reads.record_with(&real, &meta);
        let remaining = total.saturating_sub(offset + shown_lines);
        if total == 0 {
            out.push_str("(the file is empty)\n");
        } else if shown_lines == 0 {
            out.push_str(&format!(
                "(offset {offset} is past the end: the file has {total} lines)\n"
            ));
        }
        if remaining > 0 {
            out.push_str(&format!(
                "[{remaining} more lines; continue with offset={}]\n",
                offset + shown_lines
            ));
        }
        let first = if shown_lines > 0 { offset + 1 } else { 0 };
        let display = if shown_lines > 0 {
            format!(
                "read {shown} lines {first}-{} of {total}",
                offset + shown_lines
            )
        } else {
            format!("read {shown} (no lines shown of {total})")
        };
        Ok(ToolOutput::new(out, display).with_metadata(json!({
            "path": shown, "total_lines": total, "shown_lines": shown_lines,
            "remaining_lines": remaining, "cut_lines": cut_lines,
        })))
    }
}

/// Reads into `buf` (empty, with room for `want` bytes) until it holds
/// `want` bytes or the stream ends.
fn read_up_to(r: &mut impl Read, buf: &mut Vec<u8>, want: usize) -> std::io::Result<usize> {
    r.take(want as u64).read_to_end(buf)
}
