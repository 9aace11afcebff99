//! ls: one folder's entries, sorted, with kinds and sizes.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::path_signatures;
use crate::tools::{Description, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use runner_policy::{Family, Signature};

const MAX_ENTRIES: usize = 1000;

pub struct Ls;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Folder to list, relative to the workspace (default: the root).
    #[serde(default)]
    pub path: Option<String>,
}

fn human_size(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KB", "MB", "GB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

impl Tool for Ls {
    type Args = Args;

    fn name(&self) -> &str {
        "ls"
    }

    fn description(&self) -> Description {
        Description::new(
            "Lists the entries of a folder in the workspace, folders first, with sizes.",
        )
        .note("Skips .git and files ignored by .gitignore")
        .note("Use glob to find files by name across folders")
        .example("List the root", json!({}))
        .example("List a folder", json!({"path": "src"}))
    }

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    fn validate(&self, args: &Args, ctx: &ToolContext) -> Result<(), ToolError> {
        ctx.resolve(args.path.as_deref().unwrap_or("."))?;
        Ok(())
    }

    fn is_concurrency_safe(&self, _: &Args) -> bool {
        true
    }

    fn signatures(&self, args: &Args, ctx: &ToolContext) -> Vec<Signature> {
        path_signatures(ctx, Family::Read, args.path.as_deref().unwrap_or("."))
    }

    async fn call(&self, args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let asked = args.path.as_deref().unwrap_or(".");
        let r = ctx.resolve(asked)?;
        let meta = std::fs::metadata(&r.real).map_err(|e| super::io_error(e, asked))?;
        if !meta.is_dir() {
            return Err(ToolError::validation(format!(
                "{asked} is a file, not a folder; use read_file"
            )));
        }
        let walker = ignore::WalkBuilder::new(&r.real)
            .max_depth(Some(1))
            .hidden(false)
            .require_git(false)
            .git_global(false)
            .parents(true)
            .build();
        let mut dirs = Vec::new();
        let mut files = Vec::new();
        for entry in walker.flatten() {
            if entry.depth() == 0 || entry.file_name() == ".git" {
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = if r.rel == "." {
                name.clone()
            } else {
                format!("{}/{name}", r.rel)
            };
            if ctx.is_hidden(&rel) {
                continue;
            }
            let ft = entry.file_type();
            if ft.is_some_and(|t| t.is_dir()) {
                dirs.push(name);
            } else if ft.is_some_and(|t| t.is_symlink()) {
                let target = std::fs::read_link(entry.path())
                    .map(|t| t.display().to_string())
                    .unwrap_or_default();
                files.push((name, format!("link -> {target}")));
            } else {
                let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
                files.push((name, human_size(size)));
            }
        }
        dirs.sort();
        files.sort();
        let total = dirs.len() + files.len();
        let mut lines: Vec<String> = dirs.iter().map(|d| format!("dir   {d}/")).collect();
        lines.extend(files.iter().map(|(f, s)| format!("file  {f}  ({s})")));
        let mut content = format!(
            "{} ({} folders, {} files):\n",
            r.rel,
            dirs.len(),
            files.len()
        );
        if total == 0 {
            content.push_str("(empty)\n");
        }
        for l in lines.iter().take(MAX_ENTRIES) {
            content.push_str(l);
            content.push('\n');
        }
        if total > MAX_ENTRIES {
            content.push_str(&format!(
                "[{} more entries not shown]\n",
                total - MAX_ENTRIES
            ));
        }
        Ok(
            ToolOutput::new(content, format!("listed {} ({total} entries)", r.rel))
                .with_metadata(json!({"path": r.rel, "folders": dirs.len(), "files": files.len()})),
        )
    }
}
