//! `runner validate FILE...`

use std::path::PathBuf;

use super::{EXIT_INVALID, EXIT_OK, report_errors};
use crate::task::{FileKind, LoadOptions, validate_file};

pub fn validate(files: &[PathBuf], opts: &LoadOptions) -> i32 {
    let mut bad = false;
    for f in files {
        match validate_file(f, opts) {
            Ok(kind) => {
                let k = if kind == FileKind::Task {
                    "task"
                } else {
                    "policy"
                };
                println!("{}: ok ({k})", f.display());
            }
            Err(es) => {
                report_errors(&es);
                bad = true;
            }
        }
    }
    if bad { EXIT_INVALID } else { EXIT_OK }
}
