//! write_file: create or overwrite a whole file.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{diff_stats, path_signatures, read_text, text_diff};
use crate::tools::{Description, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use runner_policy::{Family, Signature};

pub struct WriteFile;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Path of the file, relative to the workspace.
    pub file_path: String,
    /// The complete new content of the file.
    pub content: String,
}

impl Tool for WriteFile {
    type Args = Args;

    fn name(&self) -> &str {
        "write_file"
    }

    fn description(&self) -> Description {
        Description::new(
            "Writes a file in the workspace, creating it (and its folders) or replacing it whole.",
        )
        .note("Prefer edit_file for changes to an existing file: it sends only the change")
        .note("The result says whether the file was created or overwritten, with a diff")
        .example(
            "Create a file",
            json!({"file_path": "docs/notes.md", "content": "# Notes\n"}),
        )
        .important("To overwrite an existing file you must read it with read_file first")
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Write
    }

    fn validate(&self, args: &Args, ctx: &ToolContext) -> Result<(), ToolError> {
        let r = ctx.resolve(&args.file_path)?;
        if r.real.is_dir() {
            return Err(ToolError::validation(format!(
                "{} is a folder; give a file path",
                args.file_path
            )));
        }
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
        let old = if r.real.exists() {
            ctx.reads
                .check_fresh(&r.real, &shown)
                .map_err(|e| ToolError::validation(e.to_string()))?;
            Some(read_text(&ctx.workspace, &r.real, &shown)?)
        } else {
            None
        };
        ctx.workspace
            .write_atomic(&r.real, args.content.as_bytes())
            .map_err(|e| ToolError::execution(format!("writing {shown}: {e}")))?;
        ctx.reads.record(&r.real);
        let diff = text_diff(&shown, old.as_deref(), &args.content);
        let (add, del) = diff_stats(&diff);
        let lines = args.content.lines().count();
        let (verb, content) = match &old {
            None => (
                "created",
                format!(
                    "Created {shown} ({lines} lines, {} bytes).",
                    args.content.len()
                ),
            ),
            Some(_) => (
                "overwrote",
                format!("Overwrote {shown} ({lines} lines; +{add} -{del})."),
            ),
        };
        Ok(
            ToolOutput::new(content, format!("{verb} {shown} (+{add} -{del})")).with_metadata(
                json!({"path": shown, "action": verb, "diff": diff, "added": add, "removed": del}),
            ),
        )
    }
}
