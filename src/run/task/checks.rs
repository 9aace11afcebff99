//! The checks phase, and the checks themselves: shell commands run in the
//! task's workspace after the agent stops.
//!
//! After each attempt the agent finished, [`judge`] puts back what the
//! policy denies editing (no check sees it), shows the checks the files
//! the policy hid from the agent, runs every check within what is left of
//! the task's time, and says whether the task ended or the model gets the
//! failures ([`feedback`]) for another attempt.
//!
//! Checks run as GitHub Actions runs a `run:` step: `bash --noprofile --norc
//! -eo pipefail`, so `cargo test 2>&1 | tail -3` fails when `cargo test`
//! does and the first failing command ends the script. `shell:` picks
//! another, as Actions' `shell:` does: `bash`, `sh` (`sh -e`), or a program
//! given the script as a file (`python`, `perl {0}`: `{0}` is the file's
//! path, added at the end when absent). The agent's own `bash` tool stays
//! plain `bash -c`: a model's exploratory pipelines (`grep x | head`) must
//! not fail on the writer's SIGPIPE.

use std::path::Path;

use super::progress::Progress;
use super::scene::Scene;
use super::scene::timed_out;
use super::violations::revert_denied_changes;
use crate::engine::{Event, EventSink};
use crate::process::{CommandSpec, run_shell};
use crate::provider::Message;
use crate::report::{CheckRecord, Outcome, OutcomeStatus};
use crate::task::TaskCheck;
use crate::tools::ToolContext;
use crate::workspace::IsolatedWorkspace;
use runner_policy::PolicySet;

const CHECK_OUTPUT_BYTES: usize = 64 * 1024;
/// Characters of a failed check's output sent back to the model.
pub const FEEDBACK_CHARS: usize = 4_000;

/// What the checks made of an attempt.
pub(super) enum Judged {
    /// The task ends so: the checks passed, failed with no retry left, or
    /// could not be run.
    Ended(Outcome),
    /// A check failed and a retry is left: the model was told why.
    Retry,
}

fn error(reason: String) -> Judged {
    Judged::Ended(Outcome {
        status: OutcomeStatus::Error,
        reason,
        error_class: None,
        tripwire: None,
    })
}

/// Runs the task's checks on the work of attempt `attempt`; records them
/// in `progress`, and a failure's feedback in its conversation.
pub(super) async fn judge(
    scene: &Scene<'_>,
    iso: &IsolatedWorkspace,
    policy: &PolicySet,
    ctx: &ToolContext,
    progress: &mut Progress,
    attempt: u32,
    sink: &dyn EventSink,
) -> Judged {
    let task = scene.task;
    // Before any check sees the copy: what the policy denies editing is
    // put back. (The built-in credentials layer's files are reverted with
    // the result: no tree walk here for it alone.)
    if policy.rules_deny_paths()
        && let Err(e) = revert_denied_changes(iso, policy, &mut progress.violations)
    {
        return error(format!("could not revert a change the policy denies: {e}"));
    }
    // The checks see the workspace as it is: what the policy hid from the
    // agent is back until they end (however they end).
    let shown = match iso.reveal_hidden() {
        Ok(g) => g,
        Err(e) => {
            return error(format!(
                "could not put back the files the policy hid from the agent for the checks: {e}"
            ));
        }
    };
    // The checks are bounded by what is left of the task's time too.
    let remaining = task.timeout.saturating_sub(scene.epoch.elapsed());
    let checks = run_checks(
        &task.checks,
        iso.path(),
        ctx.env.as_deref(),
        ctx.confine.as_ref(),
        attempt,
        scene.epoch,
        sink,
    );
    let results = tokio::time::timeout(remaining, checks).await;
    drop(shown);
    let Ok(results) = results else {
        return Judged::Ended(timed_out(task));
    };
    let failed: Vec<&CheckRecord> = results.iter().filter(|c| !c.passed).collect();
    if failed.is_empty() {
        progress.checks.extend(results);
        return Judged::Ended(Outcome {
            status: OutcomeStatus::Passed,
            reason: format!(
                "the agent finished and {} check(s) passed",
                task.checks.len()
            ),
            error_class: None,
            tripwire: None,
        });
    }
    if attempt > task.retries {
        let names: Vec<String> = failed.iter().map(|c| format!("`{}`", c.name)).collect();
        let reason = format!("check(s) failed: {}", names.join(", "));
        progress.checks.extend(results);
        return Judged::Ended(Outcome {
            status: OutcomeStatus::Failed,
            reason,
            error_class: None,
            tripwire: None,
        });
    }
    let content = feedback(&failed);
    progress.checks.extend(results);
    progress.conversation.push(Message::User { content });
    Judged::Retry
}

/// Runs every check; all run even when one fails, so the model hears of all.
pub async fn run_checks(
    checks: &[TaskCheck],
    cwd: &Path,
    env: Option<&[(String, String)]>,
    confine: Option<&std::sync::Arc<crate::contain::Confinement>>,
    attempt: u32,
    epoch: std::time::Instant,
    sink: &dyn EventSink,
) -> Vec<CheckRecord> {
    let mut out = Vec::new();
    // Each check is told as it ends (a line in CI logs, an event).
    let mut done = |record: CheckRecord| {
        sink.emit(&Event::CheckFinished(record.clone()));
        out.push(record);
    };
    for c in checks {
        let started_ms = epoch.elapsed().as_millis() as u64;
        let unstarted = |why: String| CheckRecord {
            attempt,
            name: c.name.clone(),
            command: c.run.clone(),
            passed: false,
            exit_code: None,
            timed_out: false,
            output: why,
            duration_ms: 0,
            started_ms,
        };
        // The script goes in the task's temp folder (its TMPDIR): a file
        // made in the system's temp folder after the sandbox was set up
        // is not readable to commands while the original is hidden.
        let tmp = env.and_then(|e| e.iter().find(|(k, _)| k == "TMPDIR").map(|(_, v)| v));
        let (argv, _script_file) = match shell_argv(c.shell.as_deref(), &c.run, tmp.map(Path::new))
        {
            Ok(x) => x,
            Err(e) => {
                done(unstarted(format!(
                    "could not write the check's script: {e}"
                )));
                continue;
            }
        };
        let run = run_shell(CommandSpec {
            argv: &argv,
            script: &c.run,
            cwd,
            env,
            timeout: c.timeout,
            max_output_bytes: CHECK_OUTPUT_BYTES,
            confine: confine.cloned(),
            stdin: None,
        });
        // A check's commands join the run's trace under the check's span.
        let record = match crate::telemetry::context::in_check(attempt, &c.name, run).await {
            Ok(r) => {
                let mut output = r.stdout.text.clone();
                if !r.stderr.text.is_empty() {
                    if !output.is_empty() && !output.ends_with('\n') {
                        output.push('\n');
                    }
                    output.push_str(&r.stderr.text);
                }
                CheckRecord {
                    passed: r.success(),
                    exit_code: r.exit_code,
                    timed_out: r.timed_out,
                    output: crate::contain::redact(&output).into_owned(),
                    duration_ms: r.duration.as_millis() as u64,
                    ..unstarted(String::new())
                }
            }
            Err(e) => unstarted(format!("could not start the check: {e}")),
        };
        done(record);
    }
    out
}

/// The command line of a check run by `shell` (none: bash as CI runs it),
/// and the file holding the script when the shell takes one (made in
/// `tmp`, else the system's temp folder).
pub fn shell_argv(
    shell: Option<&str>,
    script: &str,
    tmp: Option<&Path>,
) -> std::io::Result<(Vec<String>, Option<tempfile::TempPath>)> {
    let words = |s: &[&str]| s.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    match shell.map(str::trim) {
        None | Some("bash") => {
            let mut v = words(&["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"]);
            v.push(script.to_string());
            Ok((v, None))
        }
        Some("sh") => {
            let mut v = words(&["sh", "-e", "-c"]);
            v.push(script.to_string());
            Ok((v, None))
        }
        Some(template) => {
            let mut builder = tempfile::Builder::new();
            builder.prefix("runner-check-");
            let mut file = match tmp {
                Some(dir) => builder.tempfile_in(dir)?,
                None => builder.tempfile()?,
            };
            std::io::Write::write_all(&mut file, script.as_bytes())?;
            let path = file.into_temp_path();
            let p = path.display().to_string();
            let mut v: Vec<String> = runner_policy::words::split_words(template);
            if v.iter().any(|w| w.contains("{0}")) {
                for w in &mut v {
                    *w = w.replace("{0}", &p);
                }
            } else {
                v.push(p);
            }
            Ok((v, Some(path)))
        }
    }
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
        // The end of the output is where compilers and test runners say
        // what failed.
        let skip = c.output.chars().count().saturating_sub(FEEDBACK_CHARS);
        let out = match c.output.char_indices().nth(skip) {
            Some((at, _)) if skip > 0 => format!("[... earlier output cut]\n{}", &c.output[at..]),
            _ => c.output.clone(),
        };
        s.push_str(&format!("\n$ {}\n({status})\n{out}\n", c.command));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(output: String) -> CheckRecord {
        CheckRecord {
            attempt: 1,
            name: "t".into(),
            command: "make test".into(),
            passed: false,
            exit_code: Some(2),
            timed_out: false,
            output,
            duration_ms: 1,
            started_ms: 0,
        }
    }

    #[test]
    fn feedback_keeps_the_end_of_long_output() {
        let long = format!("{}é{}", "a".repeat(10_000), "END");
        let f = feedback(&[&failed(long)]);
        assert!(
            f.contains("[... earlier output cut]")
                && f.contains("éEND")
                && f.contains("exit code 2")
        );
        assert!(f.len() < FEEDBACK_CHARS + 200);
        let short = feedback(&[&failed("boom".into())]);
        assert!(short.contains("boom") && !short.contains("cut"));
    }
}
