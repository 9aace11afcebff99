//! A task run under each of several models (`runner run --models`): the
//! transcript's `matrix` says which task and which variant it is, so that
//! the reports can pivot (rows tasks, columns variants).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which cell of a run's matrix a task run is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MatrixCell {
    /// The task's own name (the transcript's `task` adds the variant and
    /// the attempt: `fix-typos/openai-gpt-4o/attempt-2`).
    pub task: String,
    /// The variant: the model (`openai:gpt-4o`).
    pub variant: String,
}
