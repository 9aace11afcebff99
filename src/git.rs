//! Running git for the runner's own work (the copy's git view, applying
//! a recorded diff, a fleet's clones and pushes): one way to start it.
//!
//! The runner's own environment may point git elsewhere: a pre-commit
//! hook runs with `GIT_DIR`, `GIT_INDEX_FILE` and the like set for the
//! repository being committed to, and a git command in another folder
//! would act on that one instead. So every command here drops them, never
//! prompts (CI has nobody to type a password), and reads no stdin unless
//! it is given some.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// The variables that would make git act on another repository than the
/// folder it runs in.
const REDIRECTS: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_COMMON_DIR",
];

/// `git` in `dir`, its environment cleared of [`REDIRECTS`], no prompt,
/// stdin from /dev/null.
pub fn command(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(dir)
        .stdin(Stdio::null())
        .env("GIT_TERMINAL_PROMPT", "0");
    for var in REDIRECTS {
        c.env_remove(var);
    }
    c
}

/// Why a git command failed.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot run git: {0}")]
    Spawn(#[from] std::io::Error),
    /// git's own words, on one line.
    #[error("git {what}: {words}")]
    Refused { what: String, words: String },
}

/// Runs `git ARGS` in `dir` (with `input` on its stdin); its trimmed
/// stdout, or git's words.
pub fn run(dir: &Path, args: &[&str], input: Option<&[u8]>) -> Result<String, GitError> {
    run_in(command(dir), args, input)
}

/// [`run`] with a [`command`] the caller added to (an author's name in
/// its environment).
pub fn run_in(mut cmd: Command, args: &[&str], input: Option<&[u8]>) -> Result<String, GitError> {
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    if input.is_some() {
        cmd.stdin(Stdio::piped());
    }
    let mut child = cmd.spawn()?;
    if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
        // A refusal before the whole input is read shows in its status.
        let _ = stdin.write_all(bytes);
    }
    let out = child.wait_with_output()?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).trim().to_string());
    }
    // The subcommand, past any `-c key=value`.
    let mut words = args.iter();
    let what = loop {
        match words.next() {
            Some(&"-c") => {
                words.next();
            }
            Some(w) => break *w,
            None => break "",
        }
    };
    Err(GitError::Refused {
        what: what.to_string(),
        words: String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .collect::<Vec<_>>()
            .join("; "),
    })
}

/// `git apply` of a unified `diff` in `dir` (`extra` options first, such
/// as `--index`): binary patches, modes and symlinks included.
pub fn apply(dir: &Path, extra: &[&str], diff: &str) -> Result<(), GitError> {
    let mut args = vec!["apply"];
    args.extend_from_slice(extra);
    args.extend(["--whitespace=nowarn", "-"]);
    run(dir, &args, Some(diff.as_bytes())).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refusal says which subcommand (past `-c key=value`) and why, on
    /// one line. (A redirect in the runner's own environment is tested on
    /// the binary: tests/it/fleet.rs.)
    #[test]
    fn a_refusal_names_its_subcommand() {
        let dir = tempfile::tempdir().unwrap();
        run(dir.path(), &["init", "-q"], None).unwrap();
        let err = run(dir.path(), &["-c", "x.y=z", "checkout", "nothing"], None).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("git checkout: ") && !text.contains('\n'),
            "{text}"
        );
        let top = run(dir.path(), &["rev-parse", "--show-toplevel"], None).unwrap();
        assert_eq!(Path::new(&top), dir.path().canonicalize().unwrap());
    }
}
