//! `runner replay --policy FILE... TRANSCRIPT...`: every recorded call
//! decided again under other policy layers, for reviewing a policy change
//! against last night's transcripts.
//!
//! A call is decided from the signatures its transcript recorded: they
//! are what the tool and the shell analysis made of its arguments, with
//! paths relative to the workspace as they were, and they do not depend
//! on the policy. So a replay needs neither the workspace nor the tools
//! that ran (MCP servers included). Calls refused before any policy was
//! asked (bad arguments, a path outside the workspace) stay refused and
//! are not listed.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{CliError, CliResult, Exit, load_policies};
use crate::engine::pipeline::decide_recorded;
use crate::report::Transcript;
use crate::tools::Registry;
use runner_policy::{Decision, PolicySet, Verdict};

/// `--format` of `runner replay`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReplayFormat {
    /// A line per changed call, and a count.
    Text,
    /// One JSON object: the changed calls and the counts.
    Json,
}

/// A call whose decision changes.
#[derive(Debug, Serialize)]
struct Changed {
    transcript: String,
    task: String,
    /// The child agent that made the call (`reviewer#1`); absent for the
    /// task's agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    agent: Option<String>,
    turn: u32,
    call_id: String,
    tool: String,
    signatures: Vec<String>,
    before: Side,
    after: Side,
}

/// One side of a change: the verdict, the deciding rule, the layer.
#[derive(Debug, Serialize)]
struct Side {
    decision: Verdict,
    rule: Option<String>,
    policy: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u64>,
}

impl Side {
    fn of(d: &Decision) -> Self {
        Self {
            decision: d.verdict,
            rule: d.rule.clone(),
            policy: d.policy.clone(),
            line: d.line,
        }
    }

    fn describe(&self) -> String {
        runner_output::describe_decision(
            self.decision,
            self.rule.as_deref(),
            self.policy.as_deref(),
            self.line,
        )
    }
}

#[derive(Debug, Serialize)]
struct ReplayReport {
    /// Calls decided again.
    calls: usize,
    /// Calls whose decision stays.
    unchanged: usize,
    changed: Vec<Changed>,
}

/// Where the calls being decided again come from.
struct Origin<'a> {
    transcript: &'a str,
    task: &'a str,
    /// The task file's profiles, for a child's own policy layer.
    agents: Option<&'a crate::task::agents::Agents>,
    registry: &'a Registry,
}

/// Decides `calls` again under `set`, and each child's calls under `set`
/// plus its profile's layer (children's authority only narrows).
fn replay_calls(
    set: &PolicySet,
    calls: &[runner_output::ToolCallRecord],
    agent: Option<&str>,
    from: &Origin<'_>,
    report: &mut ReplayReport,
) {
    for call in calls {
        if let Some(child) = runner_output::AgentRun::of(call) {
            let mut layers = set.layers().to_vec();
            if let Some(layer) = from
                .agents
                .and_then(|a| a.profiles.get(&child.profile))
                .and_then(|p| p.policy.clone())
            {
                layers.push(layer);
            }
            let child_set = PolicySet::new(layers).with_backstops(set.backstops());
            replay_calls(&child_set, &child.tool_calls, Some(&child.id), from, report);
        }
        let Some(before) = call.decision.as_deref() else {
            continue;
        };
        if before.policy.is_none() {
            continue;
        }
        let after = decide_recorded(set, from.registry, &call.tool, before.signatures.clone());
        report.calls += 1;
        if after.verdict == before.verdict {
            report.unchanged += 1;
            continue;
        }
        report.changed.push(Changed {
            transcript: from.transcript.to_string(),
            task: from.task.to_string(),
            agent: agent.map(str::to_string),
            turn: call.turn,
            call_id: call.id.clone(),
            tool: call.tool.clone(),
            signatures: after.signatures.iter().map(ToString::to_string).collect(),
            before: Side::of(before),
            after: Side::of(&after),
        });
    }
}

/// Reads a transcript.json; bad input names the file.
pub(crate) fn read_transcript(path: &Path) -> Result<Transcript, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Invalid(format!("{}: {e}", path.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| CliError::Invalid(format!("{}: not a runner transcript: {e}", path.display())))
}

pub fn replay(policies: &[PathBuf], paths: &[PathBuf], format: ReplayFormat) -> CliResult {
    let set = PolicySet::new(load_policies(policies, &[])?);
    let transcripts: Vec<(String, Transcript)> = paths
        .iter()
        .map(|p| read_transcript(p).map(|t| (p.display().to_string(), t)))
        .collect::<Result<_, _>>()?;
    let registry = Registry::builtin();
    let mut report = ReplayReport {
        calls: 0,
        unchanged: 0,
        changed: Vec::new(),
    };
    for (path, t) in &transcripts {
        // Decided with the walls the run held, as the run decided.
        let set = set.clone().with_backstops(t.backstops);
        // Children's profiles (their policy layers) from the task file.
        let task = t
            .tool_calls
            .iter()
            .any(|c| c.tool == "task")
            .then(|| {
                crate::task::load_task(Path::new(&t.task_file), &crate::task::LoadOptions::lenient())
                    .map_err(|_| {
                        eprintln!(
                            "warning: {path}: the task file {} could not be loaded: children's calls are decided without their profiles' policies",
                            t.task_file
                        )
                    })
                    .ok()
            })
            .flatten();
        let from = Origin {
            transcript: path,
            task: &t.task,
            agents: task.as_ref().and_then(|t| t.agents.as_deref()),
            registry: &registry,
        };
        replay_calls(&set, &t.tool_calls, None, &from, &mut report);
    }
    match format {
        ReplayFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("a report serialises")
        ),
        ReplayFormat::Text => {
            for c in &report.changed {
                let agent = c
                    .agent
                    .as_deref()
                    .map_or(String::new(), |a| format!(", agent {a}"));
                println!(
                    "{} (task {}{agent}, turn {}, {} {}): {} -> {}",
                    c.transcript,
                    c.task,
                    c.turn,
                    c.tool,
                    c.signatures.join(" "),
                    c.before.describe(),
                    c.after.describe()
                );
            }
            println!(
                "{} call(s) decided again: {} changed, {} unchanged",
                report.calls,
                report.changed.len(),
                report.unchanged
            );
        }
    }
    Ok(Exit::passed_if(report.changed.is_empty()))
}
