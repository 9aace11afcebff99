//! How a task's copy of its workspace was made (the transcript's
//! `workspace_copy`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a task's copy of its workspace was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WorkspaceCopy {
    /// `overlay` (copy-on-write: nothing copied, the changes read from
    /// the overlay's upper folder) or `copy` (the files copied).
    pub mode: CopyMode,
    /// For a copy, why not an overlay (`the runner is not root ...`);
    /// absent when none was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// How many files and links the copy showed when it was made.
    pub files: usize,
}

/// The way a workspace copy is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CopyMode {
    /// An overlay of the original.
    Overlay,
    /// A copy of its files.
    Copy,
}
