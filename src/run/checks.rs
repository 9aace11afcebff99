//! Checks: shell commands run in the task's workspace after the agent stops.

use std::path::Path;

use crate::process::{CommandSpec, run_shell};
use crate::report::CheckRecord;
use crate::task::TaskCheck;

const CHECK_OUTPUT_BYTES: usize = 64 * 1024;
/// Characters of a failed check's output sent back to the model.
pub const FEEDBACK_CHARS: usize = 4_000;

/// Runs every check; all run even when one fails, so the model hears of all.
pub async fn run_checks(
    checks: &[TaskCheck],
    cwd: &Path,
    env: Option<&[(String, String)]>,
    attempt: u32,
) -> Vec<CheckRecord> {
    let mut out = Vec::new();
    for c in checks {
        let record = match run_shell(CommandSpec {
            script: &c.run,
            cwd,
            env,
            timeout: c.timeout,
            max_output_bytes: CHECK_OUTPUT_BYTES,
        })
        .await
        {
            Ok(r) => {
                let mut output = r.stdout.text.clone();
                if !r.stderr.text.is_empty() {
                    if !output.is_empty() && !output.ends_with('\n') {
                        output.push('\n');
                    }
                    output.push_str(&r.stderr.text);
                }
                CheckRecord {
                    attempt,
                    name: c.name.clone(),
                    command: c.run.clone(),
                    passed: r.success(),
                    exit_code: r.exit_code,
                    timed_out: r.timed_out,
                    output,
                    duration_ms: r.duration.as_millis() as u64,
                }
            }
            Err(e) => CheckRecord {
                attempt,
                name: c.name.clone(),
                command: c.run.clone(),
                passed: false,
                exit_code: None,
                timed_out: false,
                output: format!("could not start the check: {e}"),
                duration_ms: 0,
            },
        };
        out.push(record);
    }
    out
}

/// The message that tells the model which checks failed and why.
pub fn feedback(failed: &[&CheckRecord]) -> String {
    let mut s =
        String::from("The checks failed after your changes. Fix the problems and finish again.\n");
    for c in failed {
        let status = if c.timed_out {
            "timed out".to_string()
        } else {
            format!(
                "exit code {}",
                c.exit_code.map_or("none".into(), |c| c.to_string())
            )
        };
        let mut out: String = c
            .output
            .chars()
            .rev()
            .take(FEEDBACK_CHARS)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if c.output.chars().count() > FEEDBACK_CHARS {
            out = format!("[... earlier output cut]\n{out}");
        }
        s.push_str(&format!("\n$ {}\n({status})\n{out}\n", c.command));
    }
    s
}
