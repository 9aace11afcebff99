//! task: starts a child agent by profile name (issue 32).
//!
//! Not a built-in of every task: a task with `agents:` gets one made for
//! it, whose description lists the profiles the agent may start. The call
//! is decided on `Agent(profile)`; the child runs under the parent's
//! policy layers plus its profile's, with a reserved share of the budget
//! (see `run::agents`). Its answer is the result.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::tools::{Description, Risk, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use runner_policy::{Family, Signature};

/// The tool, with the profiles it may start: (name, description).
pub struct TaskTool {
    pub profiles: Vec<(String, String)>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The profile to start (one of those listed).
    pub agent: String,
    /// What the child is to do: all it knows of the task.
    pub prompt: String,
}

impl Tool for TaskTool {
    type Args = Args;

    fn name(&self) -> &str {
        "task"
    }

    fn description(&self) -> Description {
        let mut d = Description::new(
            "Starts a child agent with its own instructions and tools to do part of the work; its final answer is the result.",
        )
        .note("Several task calls in one turn run in parallel")
        .note("The child knows only the prompt you give it: say everything it needs")
        .example(
            "Review a module",
            json!({"agent": self.profiles.first().map_or("reviewer", |p| p.0.as_str()), "prompt": "Review src/lib.rs for unsafe code and list the problems."}),
        );
        let list: Vec<String> = self
            .profiles
            .iter()
            .map(|(n, desc)| {
                if desc.is_empty() {
                    format!("`{n}`")
                } else {
                    format!("`{n}`: {desc}")
                }
            })
            .collect();
        d = d.long(format!("Profiles:\n- {}", list.join("\n- ")));
        d
    }

    fn kind(&self) -> ToolKind {
        // What it does is what its child's tools do, each decided.
        ToolKind::Execute
    }

    fn risk(&self) -> Risk {
        Risk::Medium
    }

    fn validate(&self, args: &Args, _: &ToolContext) -> Result<(), ToolError> {
        if self.profiles.iter().any(|(n, _)| *n == args.agent) {
            Ok(())
        } else {
            Err(ToolError::validation(format!(
                "no profile `{}` may be started here; profiles: {}",
                args.agent,
                self.profiles
                    .iter()
                    .map(|p| p.0.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )))
        }
    }

    fn is_concurrency_safe(&self, _: &Args) -> bool {
        true
    }

    fn signatures(&self, args: &Args, _: &ToolContext) -> Vec<Signature> {
        vec![Signature::new(Family::Agent, args.agent.clone())]
    }

    async fn call(&self, args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let Some(d) = &ctx.delegate else {
            return Err(ToolError::permission(
                "this agent may not start children (its profile's agents: names none)",
            ));
        };
        d.delegate(&args.agent, &args.prompt).await
    }
}
