//! grep: regex search over the workspace on ripgrep's engine.
//!
//! The walk is ignore's parallel walker and the search is grep-searcher with a
//! grep-regex matcher, set up as ripgrep sets them up: `.gitignore`,
//! `.ignore` and `.rgignore` honoured, hidden files skipped unless the path
//! names them, binary files (a NUL byte) skipped. Results are sorted by path
//! and line so that a run is reproducible.

use std::sync::Mutex;

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, SearcherBuilder, sinks::Lossy};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::glob::{compile, rel_to, search_walker};
use super::path_signatures;
use crate::tools::{Description, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use runner_policy::{Family, Signature};

const DEFAULT_LIMIT: usize = 1000;

pub struct Grep;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Regular expression (Rust regex syntax, as ripgrep). `(?i)` for case-insensitive.
    pub pattern: String,
    /// File or folder to search, relative to the workspace (default: the root).
    #[serde(default)]
    pub path: Option<String>,
    /// Only search files whose name matches this glob, e.g. `*.rs` or `*.{ts,tsx}`.
    #[serde(default)]
    pub include: Option<String>,
    /// Most matching lines to return (default 1000).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub limit: Option<usize>,
}

impl Tool for Grep {
    type Args = Args;

    fn name(&self) -> &str {
        "grep"
    }

    fn description(&self) -> Description {
        Description::new("Searches file contents for a regular expression; returns `path:line:text` lines.")
            .note("Honours .gitignore like ripgrep; binary and hidden files are skipped unless path names them")
            .note("Use include to filter by file name, e.g. \"*.py\"")
            .note("Results are capped; the output says how many matches were left out")
            .example("Find a function", json!({"pattern": "fn parse_\\w+", "include": "*.rs"}))
            .example("Search one folder", json!({"pattern": "TODO", "path": "src"}))
    }

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    fn validate(&self, args: &Args, ctx: &ToolContext) -> Result<(), ToolError> {
        build_matcher(&args.pattern)?;
        if let Some(inc) = &args.include {
            compile(inc).map_err(|e| ToolError::validation(e.to_string()))?;
        }
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
        let matcher = build_matcher(&args.pattern)?;
        let include = match &args.include {
            Some(inc) => Some(
                globset::GlobBuilder::new(inc)
                    .literal_separator(false)
                    .build()
                    .map_err(|e| ToolError::validation(format!("invalid include glob: {e}")))?
                    .compile_matcher(),
            ),
            None => None,
        };
        let asked = args.path.as_deref().unwrap_or(".");
        let r = ctx.resolve(asked)?;
        if !r.real.exists() {
            return Err(ToolError::execution(format!("path not found: {asked}")));
        }
        let root = ctx.workspace.root().to_path_buf();
        let hits: Mutex<Vec<(String, u64, String)>> = Mutex::new(Vec::new());
        let mut walker = search_walker(&r.real);
        walker.hidden(true).add_custom_ignore_filename(".rgignore");
        walker.build_parallel().run(|| {
            let hits = &hits;
            let matcher = matcher.clone();
            let include = include.clone();
            let root = root.clone();
            let mut searcher = SearcherBuilder::new()
                .binary_detection(BinaryDetection::quit(b'\x00'))
                .line_number(true)
                .build();
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return ignore::WalkState::Continue;
                };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return ignore::WalkState::Continue;
                }
                if let Some(inc) = &include
                    && !inc.is_match(entry.file_name())
                {
                    return ignore::WalkState::Continue;
                }
                let rel = rel_to(&root, entry.path());
                if ctx.is_hidden(&rel) {
                    return ignore::WalkState::Continue;
                }
                let mut local = Vec::new();
                let _ = searcher.search_path(
                    &matcher,
                    entry.path(),
                    Lossy(|line_no, line| {
                        let line = line.strip_suffix('\n').unwrap_or(line);
                        let line = line.strip_suffix('\r').unwrap_or(line);
                        local.push((rel.clone(), line_no, line.to_string()));
                        Ok(true)
                    }),
                );
                if !local.is_empty() {
                    hits.lock().unwrap().extend(local);
                }
                ignore::WalkState::Continue
            })
        });
        let mut hits = hits.into_inner().unwrap();
        hits.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT).max(1);
        let total = hits.len();
        let files = {
            let mut f: Vec<&str> = hits.iter().map(|h| h.0.as_str()).collect();
            f.dedup();
            f.len()
        };
        let mut content = String::new();
        for (p, n, l) in hits.iter().take(limit) {
            content.push_str(&format!("{p}:{n}:{l}\n"));
        }
        if total == 0 {
            content.push_str(&format!("No matches for `{}`\n", args.pattern));
        } else if total > limit {
            content.push_str(&format!(
                "[{} more matches left out ({total} in {files} files); narrow the pattern, path or include]\n",
                total - limit
            ));
        }
        Ok(ToolOutput::new(content, format!("grep {}: {total} matches in {files} files", args.pattern))
            .with_metadata(json!({"pattern": args.pattern, "matches": total, "files": files, "shown": total.min(limit)})))
    }
}

fn build_matcher(pattern: &str) -> Result<grep_regex::RegexMatcher, ToolError> {
    RegexMatcherBuilder::new()
        .line_terminator(Some(b'\n'))
        .build(pattern)
        .map_err(|e| ToolError::validation(format!("invalid regex `{pattern}`: {e}")))
}
