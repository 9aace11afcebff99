//! probe: a tool for tests only (feature `test-tools`). It sleeps, then
//! reports when it started and ended, so tests can see what ran in parallel.
//! It is also the proof that a new tool is one file plus one registry line.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::tools::{Description, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use runner_policy::{Family, Signature};

pub struct Probe;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A name for this call.
    pub label: String,
    /// How long to sleep, in milliseconds.
    #[serde(default)]
    pub sleep_ms: u64,
    /// Whether the call may run in parallel with others.
    #[serde(default = "yes")]
    pub safe: bool,
}

fn yes() -> bool {
    true
}

fn now_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
}

impl Tool for Probe {
    type Args = Args;

    fn name(&self) -> &str {
        "probe"
    }

    fn description(&self) -> Description {
        Description::new("Test tool: sleeps and reports its start and end times.")
    }

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    fn is_concurrency_safe(&self, args: &Args) -> bool {
        args.safe
    }

    fn signatures(&self, _: &Args, _: &ToolContext) -> Vec<Signature> {
        vec![Signature::new(Family::Tool, "probe")]
    }

    async fn call(&self, args: Args, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        let start = now_ms();
        tokio::time::sleep(std::time::Duration::from_millis(args.sleep_ms)).await;
        let end = now_ms();
        Ok(ToolOutput::new(
            format!("probe {} ran {start}..{end}", args.label),
            format!("probe {}", args.label),
        )
        .with_metadata(
            json!({"label": args.label, "start_ms": start as u64, "end_ms": end as u64}),
        ))
    }
}
