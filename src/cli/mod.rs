//! Command-line commands, one file each. stdout carries data, stderr logs.

pub mod check;
pub mod expand;
pub mod run;
pub mod schema;
pub mod tool;
pub mod validate;

/// Exit codes (DESIGN §5).
pub const EXIT_OK: i32 = 0;
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_INVALID: i32 = 2;

/// Prints config errors to stderr.
pub fn report_errors(errors: &[crate::config_error::ConfigError]) {
    for e in errors {
        eprintln!("error: {e}");
    }
}
