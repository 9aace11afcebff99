//! What `changes.diff` left out: a diff over `--max-diff-bytes` (default
//! 10 MB) keeps each file's header and says what it left out of the
//! files it cut (issue 72). `--apply` applies the whole change from the
//! copy, never from the cut diff.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A `changes.diff` that was cut to its bound.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DiffCut {
    /// The bound, in bytes (`--max-diff-bytes`).
    pub limit_bytes: u64,
    /// The whole diff's size, in bytes (for a file whose contents are over
    /// the bound, which is not rendered, its contents' size).
    pub whole_bytes: u64,
    /// The files whose diff was left out, with their headers kept.
    pub files: Vec<LeftOut>,
}

/// One file whose diff `changes.diff` left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LeftOut {
    /// The path, relative to the workspace, with `/`.
    pub path: String,
    /// The size of its diff, in bytes (of its contents, for a file whose
    /// contents are over the bound).
    pub bytes: u64,
    /// Why: `binary` (a binary file's patch over a tenth of the bound),
    /// `large` (a text diff over a tenth of the bound) or `over the bound`
    /// (the diff had reached it).
    pub why: String,
}
