//! `runner validate FILE...`

use std::path::PathBuf;

use super::{CliError, CliResult, Exit};
use crate::task::{FileKind, LoadOptions, validate_file};

/// Every file is checked; the errors of all of them are reported together.
pub fn validate(files: &[PathBuf], opts: &LoadOptions) -> CliResult {
    let mut errors = Vec::new();
    for f in files {
        // The lint's warnings of a policy, whether it loads or not (a task
        // file is no policy: nothing).
        super::lint::print_warnings(f);
        match validate_file(f, opts) {
            Ok(kind) => {
                let k = if kind == FileKind::Task {
                    "task"
                } else {
                    "policy"
                };
                println!("{}: ok ({k})", f.display());
            }
            Err(es) => errors.extend(es),
        }
    }
    if errors.is_empty() {
        Ok(Exit::Passed)
    } else {
        Err(CliError::Config(errors))
    }
}
