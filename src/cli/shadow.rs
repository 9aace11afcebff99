//! `runner run --shadow-policy FILE --shadow-fail-on WHAT`: a candidate
//! policy decided live beside the enforced one, on the run's real calls,
//! and an exit status a candidate's pull request can gate on.
//!
//! The candidate's layers stand in for the task's policy and the run's
//! `--policy` layers, as `runner replay --policy` does offline, with the
//! walls the run holds; the calls they would decide otherwise are listed
//! in the summary, the report and JUnit, and counted in each transcript.

use std::path::PathBuf;

use super::{CliError, Exit, load_policies};
use crate::run::TaskResult;
use runner_output::ShadowChange;

/// What `--shadow-fail-on` fails the run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ShadowFailOn {
    /// A call the run allowed that the candidate would deny.
    NewlyDenied,
    /// A call the run denied that the candidate would allow.
    NewlyAllowed,
    /// Either.
    Changed,
}

/// The shadow options of `runner run`.
#[derive(Debug, Clone, clap::Args)]
pub struct ShadowArgs {
    /// A candidate policy that decides every call too, without being
    /// enforced; its layers stand in for the task's policy and --policy.
    /// Repeatable (each file a layer). Takes precedence over a task's
    /// `shadow_policy:`.
    #[arg(long = "shadow-policy", value_name = "FILE")]
    pub shadow_policies: Vec<PathBuf>,
    /// Exit 1 when the shadow policy would change a call this way, even if
    /// every task passed: `newly-denied`, `newly-allowed` or `changed`.
    #[arg(long, value_enum, value_name = "WHAT")]
    pub shadow_fail_on: Option<ShadowFailOn>,
}

impl ShadowArgs {
    /// The candidate's layers, loaded as `--policy` files are (with
    /// `{{files}}` bound to `files`).
    pub fn load(
        &self,
        files: &[String],
    ) -> Result<Vec<runner_policy::Policy>, Vec<runner_policy::ConfigError>> {
        load_policies(&self.shadow_policies, files)
    }

    /// `--shadow-fail-on` without a shadow policy anywhere is a mistake.
    pub fn check(&self, tasks: &[crate::task::Task]) -> Result<(), CliError> {
        if self.shadow_fail_on.is_some()
            && self.shadow_policies.is_empty()
            && tasks.iter().all(|t| t.shadow_policy.is_empty())
        {
            return Err(CliError::Invalid(
                "--shadow-fail-on: no shadow policy to decide with (give --shadow-policy FILE, or a task's shadow_policy:)".into(),
            ));
        }
        Ok(())
    }

    /// The run's exit once `--shadow-fail-on` has had its say, and the line
    /// saying why when it changed it.
    pub fn exit(&self, exit: Exit, results: &[TaskResult]) -> (Exit, Option<String>) {
        let Some(on) = self.shadow_fail_on else {
            return (exit, None);
        };
        let count = |k: ShadowChange| -> u32 {
            results
                .iter()
                .map(|r| match k {
                    ShadowChange::NewlyDenied => r.transcript.counts.shadow_newly_denied,
                    ShadowChange::NewlyAllowed => r.transcript.counts.shadow_newly_allowed,
                })
                .sum()
        };
        let (denied, allowed) = (
            count(ShadowChange::NewlyDenied),
            count(ShadowChange::NewlyAllowed),
        );
        let hit = match on {
            ShadowFailOn::NewlyDenied => denied > 0,
            ShadowFailOn::NewlyAllowed => allowed > 0,
            ShadowFailOn::Changed => denied + allowed > 0,
        };
        if !hit || exit != Exit::Passed {
            return (exit, None);
        }
        (
            Exit::Failed,
            Some(format!(
                "runner: the shadow policy would deny {denied} call(s) the run allowed and allow {allowed} it denied (--shadow-fail-on {}): see summary.md",
                match on {
                    ShadowFailOn::NewlyDenied => "newly-denied",
                    ShadowFailOn::NewlyAllowed => "newly-allowed",
                    ShadowFailOn::Changed => "changed",
                }
            )),
        )
    }
}
