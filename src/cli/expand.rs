//! Task arguments: paths, or globs the shell did not expand (quoted in CI
//! YAML, or on Windows).

use std::path::{Path, PathBuf};

/// Why the arguments name no file (`what`: `task` or `policy`).
#[derive(Debug, thiserror::Error)]
pub enum ExpandError {
    #[error("{0}: no such {1} file")]
    NoSuchFile(String, &'static str),
    #[error("{arg}: invalid glob: {source}")]
    Glob { arg: String, source: globset::Error },
    #[error("{0}: no {1} files match")]
    NoMatch(String, &'static str),
}

/// Expands each task argument; a glob that matches nothing is an error.
pub fn expand_args(args: &[String]) -> Result<Vec<PathBuf>, ExpandError> {
    expand(args, "task")
}

/// Expands each `--policy` argument as [`expand_args`] does task ones: a
/// glob the shell left (quoted in a workflow's YAML) is the runner's.
pub fn expand_policy_args(args: &[PathBuf]) -> Result<Vec<PathBuf>, ExpandError> {
    let args: Vec<String> = args.iter().map(|p| p.display().to_string()).collect();
    expand(&args, "policy")
}

/// Expands each argument naming a `what` file.
fn expand(args: &[String], what: &'static str) -> Result<Vec<PathBuf>, ExpandError> {
    let mut out = Vec::new();
    for a in args {
        let p = Path::new(a);
        if p.exists() || !a.contains(['*', '?', '[']) {
            if !p.is_file() {
                return Err(ExpandError::NoSuchFile(a.clone(), what));
            }
            out.push(p.to_path_buf());
            continue;
        }
        let matcher = globset::GlobBuilder::new(a)
            .literal_separator(true)
            .build()
            .map_err(|source| ExpandError::Glob {
                arg: a.clone(),
                source,
            })?
            .compile_matcher();
        // Walk from the part before the first glob character.
        let literal: String = a.chars().take_while(|c| !"*?[{".contains(*c)).collect();
        let base = match literal.rfind('/') {
            Some(i) => PathBuf::from(&literal[..i.max(1)]),
            None => PathBuf::from("."),
        };
        let mut found: Vec<PathBuf> = ignore::WalkBuilder::new(&base)
            .hidden(false)
            .git_ignore(false)
            .build()
            .flatten()
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
            .map(|e| e.into_path())
            .filter(|p| {
                let s = p.strip_prefix("./").unwrap_or(p);
                matcher.is_match(s) || matcher.is_match(p)
            })
            .collect();
        if found.is_empty() {
            return Err(ExpandError::NoMatch(a.clone(), what));
        }
        found.sort();
        out.extend(found);
    }
    Ok(out)
}
