//! edit_file: replace text in a file (exact, flexible or regex matching).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{diff_stats, path_signatures, read_text, text_diff};
use crate::tools::{Description, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use runner_policy::{Family, Signature};

pub struct EditFile;

/// How `old_string` is found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MatchMode {
    /// The exact text, byte for byte.
    #[default]
    Exact,
    /// Whole lines, ignoring differences of indentation and trailing spaces.
    Flexible,
    /// A regular expression; `new_string` may use `$1` captures.
    Regex,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Path of the file, relative to the workspace.
    pub file_path: String,
    /// The text to replace; must occur exactly once unless replace_all is true.
    pub old_string: String,
    /// The replacement text; must differ from old_string.
    pub new_string: String,
    /// Replace every occurrence instead of requiring a unique one.
    #[serde(default)]
    pub replace_all: Option<bool>,
    /// How old_string is matched: exact (default), flexible or regex.
    #[serde(default, rename = "match")]
    pub match_mode: Option<MatchMode>,
}

impl Tool for EditFile {
    type Args = Args;

    fn name(&self) -> &str {
        "edit_file"
    }

    fn description(&self) -> Description {
        Description::new("Replaces text in an existing file of the workspace.")
            .long("Finds old_string in the file and replaces it with new_string. The match must be unique unless replace_all is true.")
            .note("Keep the exact indentation of the file in old_string and new_string")
            .note("match=flexible ignores differences of indentation and trailing spaces (whole lines)")
            .note("match=regex treats old_string as a regular expression; new_string may use $1")
            .note("Use replace_all=true to rename something everywhere in the file")
            .note("To create a new file use write_file")
            .example("Rename a function", json!({"file_path": "src/lib.rs", "old_string": "fn old_name(", "new_string": "fn new_name("}))
            .example("Rename everywhere", json!({"file_path": "src/lib.rs", "old_string": "old_var", "new_string": "new_var", "replace_all": true}))
            .important("Read the file with read_file before editing it; never guess its content")
            .important("If old_string occurs more than once, add surrounding lines to make it unique")
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Write
    }

    fn validate(&self, args: &Args, ctx: &ToolContext) -> Result<(), ToolError> {
        if args.old_string == args.new_string {
            return Err(ToolError::validation(
                "old_string and new_string are identical; nothing would change",
            ));
        }
        if args.old_string.is_empty() {
            return Err(ToolError::validation(
                "old_string is empty; use write_file to create or fill a file",
            ));
        }
        ctx.resolve(&args.file_path)?;
        Ok(())
    }

    fn is_concurrency_safe(&self, _: &Args) -> bool {
        false
    }

    fn signatures(&self, args: &Args, ctx: &ToolContext) -> Vec<Signature> {
        path_signatures(ctx, Family::Edit, &args.file_path)
    }

    async fn call(&self, args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let r = ctx.resolve(&args.file_path)?;
        let shown = r.rel.clone();
        if r.real.is_dir() {
            return Err(ToolError::validation(format!(
                "{shown} is a folder, not a file"
            )));
        }
        if !r.real.exists() {
            return Err(ToolError::execution(format!(
                "file not found: {shown}; use write_file to create it"
            )));
        }
        ctx.reads
            .check_fresh(&r.real, &shown)
            .map_err(|e| ToolError::validation(e.to_string()))?;
        let text = read_text(&ctx.workspace, &r.real, &shown)?;
        let mode = args.match_mode.unwrap_or_default();
        let replace_all = args.replace_all.unwrap_or(false);
        let crlf = text.contains("\r\n");
        let fix_eol = |s: &str| {
            if crlf && !s.contains('\r') {
                s.replace('\n', "\r\n")
            } else {
                s.to_string()
            }
        };
        let (new_text, count) = match mode {
            MatchMode::Exact => {
                let old = fix_eol(&args.old_string);
                let new = fix_eol(&args.new_string);
                let count = text.matches(old.as_str()).count();
                check_count(count, replace_all, &shown)?;
                let replaced = if replace_all {
                    text.replace(old.as_str(), &new)
                } else {
                    text.replacen(old.as_str(), &new, 1)
                };
                (replaced, count)
            }
            MatchMode::Regex => {
                let re = regex::Regex::new(&args.old_string)
                    .map_err(|e| ToolError::validation(format!("invalid regex: {e}")))?;
                let count = re.find_iter(&text).count();
                check_count(count, replace_all, &shown)?;
                let new = fix_eol(&args.new_string);
                let replaced = if replace_all {
                    re.replace_all(&text, new.as_str()).into_owned()
                } else {
                    re.replace(&text, new.as_str()).into_owned()
                };
                (replaced, count)
            }
            MatchMode::Flexible => flexible_replace(&text, &args, replace_all, &shown, crlf)?,
        };
        if new_text == text {
            return Err(ToolError::validation(
                "the replacement leaves the file unchanged",
            ));
        }
        ctx.workspace
            .write_atomic(&r.real, new_text.as_bytes())
            .map_err(|e| ToolError::execution(format!("writing {shown}: {e}")))?;
        ctx.reads.record(&r.real);
        let diff = text_diff(&shown, Some(&text), &new_text);
        let (add, del) = diff_stats(&diff);
        let replaced = if replace_all { count } else { 1 };
        let how = match mode {
            MatchMode::Exact => String::new(),
            MatchMode::Flexible => {
                " using flexible matching (indentation and trailing spaces ignored)".into()
            }
            MatchMode::Regex => " using regex matching".into(),
        };
        Ok(ToolOutput::new(
            format!(
                "Edited {shown}: replaced {replaced} occurrence(s){how} (+{add} -{del} lines)."
            ),
            format!("edited {shown} (+{add} -{del})"),
        )
        .with_metadata(json!({
            "path": shown, "replacements": replaced, "match": format!("{mode:?}").to_lowercase(),
            "diff": diff, "added": add, "removed": del,
        })))
    }
}

fn check_count(count: usize, replace_all: bool, shown: &str) -> Result<(), ToolError> {
    if count == 0 {
        return Err(ToolError::validation(format!(
            "old_string was not found in {shown}. Read the file again and copy the text exactly, \
             or use match=flexible if only indentation differs"
        )));
    }
    if count > 1 && !replace_all {
        return Err(ToolError::validation(format!(
            "old_string occurs {count} times in {shown}. Add surrounding lines to make it unique, \
             or set replace_all=true to replace every occurrence"
        )));
    }
    Ok(())
}

/// Line-based matching that ignores leading and trailing white space; the
/// replacement takes the indentation of the matched lines.
fn flexible_replace(
    text: &str,
    args: &Args,
    replace_all: bool,
    shown: &str,
    crlf: bool,
) -> Result<(String, usize), ToolError> {
    let eol = if crlf { "\r\n" } else { "\n" };
    let norm = |l: &str| l.trim().to_string();
    let old_lines: Vec<&str> = args.old_string.trim_matches('\n').lines().collect();
    let needle: Vec<String> = old_lines.iter().map(|l| norm(l)).collect();
    if needle.iter().all(|l| l.is_empty()) {
        return Err(ToolError::validation("old_string has no text to match"));
    }
    let ends_with_newline = text.ends_with('\n');
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let bare = |l: &str| l.trim_end_matches(['\n', '\r']).to_string();
    let mut starts = Vec::new();
    let mut i = 0;
    while i + needle.len() <= lines.len() {
        if (0..needle.len()).all(|k| norm(&bare(lines[i + k])) == needle[k]) {
            starts.push(i);
            i += needle.len();
        } else {
            i += 1;
        }
    }
    check_count(starts.len(), replace_all, shown)?;
    let targets = if replace_all {
        &starts[..]
    } else {
        &starts[..1]
    };
    let indent_of = |l: &str| l.len() - l.trim_start().len();
    let old_indent = old_lines
        .iter()
        .find(|l| !l.trim().is_empty())
        .map(|l| l[..indent_of(l)].to_string())
        .unwrap_or_default();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    for &s in targets {
        for l in &lines[i..s] {
            out.push_str(l);
        }
        let first = bare(lines[s]);
        let file_indent = first[..indent_of(&first)].to_string();
        let new_lines: Vec<&str> = args.new_string.trim_matches('\n').lines().collect();
        for nl in &new_lines {
            let re_indented = match nl.strip_prefix(old_indent.as_str()) {
                Some(rest) if !nl.trim().is_empty() => format!("{file_indent}{rest}"),
                _ => nl.to_string(),
            };
            out.push_str(re_indented.trim_end_matches('\r'));
            out.push_str(eol);
        }
        i = s + needle.len();
    }
    for l in &lines[i..] {
        out.push_str(l);
    }
    if !ends_with_newline && i == lines.len() && out.ends_with(eol) {
        out.truncate(out.len() - eol.len());
    }
    Ok((out, starts.len()))
}
