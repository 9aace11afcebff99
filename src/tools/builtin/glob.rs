//! glob: files whose path matches a pattern, newest first.

use std::path::Path;
use std::sync::Mutex;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::path_signatures;
use crate::tools::{Description, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use runner_policy::{Family, Signature};

const MAX_RESULTS: usize = 200;

pub struct Glob;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Glob pattern relative to the search folder, e.g. `**/*.rs` or `src/*.ts`.
    pub pattern: String,
    /// Folder to search in, relative to the workspace (default: the root).
    #[serde(default)]
    pub path: Option<String>,
}

/// Compiles a pattern the way every path pattern of the runner is compiled:
/// `*` stays inside one path segment, `**` crosses segments.
pub fn compile(pattern: &str) -> Result<globset::GlobMatcher, GlobError> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| GlobError {
            pattern: pattern.to_string(),
            why: e.kind().to_string(),
        })
}

/// A pattern that is not a glob.
#[derive(Debug, thiserror::Error)]
#[error("invalid glob pattern `{pattern}`: {why}")]
pub struct GlobError {
    pub pattern: String,
    pub why: String,
}

impl Tool for Glob {
    type Args = Args;

    fn name(&self) -> &str {
        "glob"
    }

    fn description(&self) -> Description {
        Description::new("Finds files whose path matches a glob pattern, newest first.")
            .note("`*` matches within one folder level, `**` across levels: `**/*.rs` finds Rust files anywhere")
            .note("Files ignored by .gitignore and the .git folder are skipped")
            .note("Paths in the result are relative to the workspace root")
            .example("All Rust files", json!({"pattern": "**/*.rs"}))
            .example("Tests in a folder", json!({"pattern": "*_test.go", "path": "pkg/api"}))
    }

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    fn validate(&self, args: &Args, ctx: &ToolContext) -> Result<(), ToolError> {
        compile(&args.pattern).map_err(|e| ToolError::validation(e.to_string()))?;
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
        let matcher = compile(&args.pattern).map_err(|e| ToolError::validation(e.to_string()))?;
        let asked = args.path.as_deref().unwrap_or(".");
        let r = ctx.resolve(asked)?;
        if !r.real.is_dir() {
            return Err(ToolError::validation(format!("{asked} is not a folder")));
        }
        let base = r.real.clone();
        let found: Mutex<Vec<(std::time::SystemTime, String)>> = Mutex::new(Vec::new());
        let root = ctx.workspace.root().to_path_buf();
        search_walker(&base).build_parallel().run(|| {
            let found = &found;
            let matcher = &matcher;
            let base = base.clone();
            let root = root.clone();
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return ignore::WalkState::Continue;
                };
                if !entry
                    .file_type()
                    .is_some_and(|t| t.is_file() || t.is_symlink())
                {
                    return ignore::WalkState::Continue;
                }
                let Ok(under_base) = entry.path().strip_prefix(&base) else {
                    return ignore::WalkState::Continue;
                };
                if !matcher.is_match(under_base) {
                    return ignore::WalkState::Continue;
                }
                let rel = rel_to(&root, entry.path());
                if ctx.is_hidden(&rel) {
                    return ignore::WalkState::Continue;
                }
                let mtime = entry
                    .metadata()
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .unwrap_or(std::time::UNIX_EPOCH);
                found.lock().unwrap().push((mtime, rel));
                ignore::WalkState::Continue
            })
        });
        let mut found = found.into_inner().unwrap();
        found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let total = found.len();
        let mut content = String::new();
        for (_, p) in found.iter().take(MAX_RESULTS) {
            content.push_str(p);
            content.push('\n');
        }
        if total == 0 {
            content.push_str(&format!("No files match `{}` in {}\n", args.pattern, r.rel));
        } else if total > MAX_RESULTS {
            content.push_str(&format!(
                "[{} more files not shown; use a narrower pattern or path]\n",
                total - MAX_RESULTS
            ));
        }
        Ok(
            ToolOutput::new(content, format!("glob {}: {total} files", args.pattern))
                .with_metadata(json!({"pattern": args.pattern, "path": r.rel, "total": total})),
        )
    }
}

/// The walker glob and grep share: `.gitignore` honoured like ripgrep (with or
/// without a `.git` folder), hidden files searched, `.git` skipped.
pub fn search_walker(base: &Path) -> ignore::WalkBuilder {
    let mut b = ignore::WalkBuilder::new(base);
    b.hidden(false)
        .require_git(false)
        .git_global(false)
        .parents(true)
        .threads(
            std::thread::available_parallelism()
                .map_or(2, |n| n.get())
                .min(12),
        )
        .filter_entry(|e| e.file_name() != ".git");
    b
}

/// `/`-separated path of `p` relative to `root`.
pub fn rel_to(root: &Path, p: &Path) -> String {
    p.strip_prefix(root)
        .unwrap_or(p)
        .to_string_lossy()
        .into_owned()
}
