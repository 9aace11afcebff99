//! save_memory: remember a fact in the workspace's CONTEXT.md.
//!
//! Facts go under `## Agent Memories` in `CONTEXT.md`. The file lands in the
//! task's diff like any change, and the runner puts CONTEXT.md in the system
//! prompt of later runs, so what one run learns the next one knows.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::tools::{Description, Risk, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use runner_policy::{Family, Signature};

pub const MEMORY_FILE: &str = "CONTEXT.md";
pub const MEMORY_HEADING: &str = "## Agent Memories";

pub struct SaveMemory;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// One fact worth remembering in later runs, as a short sentence.
    pub fact: String,
}

/// Inserts `bullet` at the end of the memories section, creating it.
pub fn insert_memory(text: &str, bullet: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let Some(start) = lines.iter().position(|l| l.trim_end() == MEMORY_HEADING) else {
        let mut out = text.trim_end().to_string();
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(&format!("{MEMORY_HEADING}\n\n{bullet}\n"));
        return out;
    };
    let end = lines[start + 1..]
        .iter()
        .position(|l| l.starts_with("## ") || l.starts_with("# "))
        .map_or(lines.len(), |i| start + 1 + i);
    // Insert after the last non-blank line of the section.
    let mut at = end;
    while at > start + 1 && lines[at - 1].trim().is_empty() {
        at -= 1;
    }
    let mut out: Vec<String> = lines[..at].iter().map(|s| s.to_string()).collect();
    if at == start + 1 {
        out.push(String::new());
    }
    out.push(bullet.to_string());
    if end < lines.len() {
        out.push(String::new());
    }
    out.extend(lines[end..].iter().map(|s| s.to_string()));
    let mut s = out.join("\n");
    s.push('\n');
    s
}

impl Tool for SaveMemory {
    type Args = Args;

    fn name(&self) -> &str {
        "save_memory"
    }

    fn description(&self) -> Description {
        Description::new("Saves a fact about this repository for later runs, in CONTEXT.md under \"## Agent Memories\".")
            .note("Use it for durable facts: how to build, conventions, pitfalls you discovered")
            .note("Do not save secrets or one-off details of this task")
            .example("Remember the test command", json!({"fact": "Integration tests need `make db` first."}))
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Write
    }

    fn risk(&self) -> Risk {
        Risk::Low
    }

    fn validate(&self, args: &Args, _: &ToolContext) -> Result<(), ToolError> {
        if args.fact.trim().is_empty() {
            return Err(ToolError::validation("fact is empty"));
        }
        if args.fact.len() > 2000 {
            return Err(ToolError::validation(
                "fact is longer than 2000 characters; keep it short",
            ));
        }
        Ok(())
    }

    fn is_concurrency_safe(&self, _: &Args) -> bool {
        false
    }

    fn signatures(&self, _: &Args, _: &ToolContext) -> Vec<Signature> {
        vec![Signature::bare(Family::Memory)]
    }

    async fn call(&self, args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let path = ctx.resolve(MEMORY_FILE)?.real;
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(ToolError::execution(format!("reading {MEMORY_FILE}: {e}"))),
        };
        let today = time::OffsetDateTime::now_utc().date();
        let fact = args.fact.split_whitespace().collect::<Vec<_>>().join(" ");
        let bullet = format!("- {today}: {fact}");
        let new = insert_memory(&text, &bullet);
        ctx.workspace
            .write_atomic(&path, new.as_bytes())
            .map_err(|e| ToolError::execution(format!("writing {MEMORY_FILE}: {e}")))?;
        Ok(ToolOutput::new(
            format!("Saved to {MEMORY_FILE} under \"{MEMORY_HEADING}\": {fact}"),
            format!("remembered: {}", fact.chars().take(60).collect::<String>()),
        )
        .with_metadata(json!({"file": MEMORY_FILE, "fact": fact})))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserts_into_existing_section_before_next_heading() {
        let t = "# Ctx\n\n## Agent Memories\n\n- old\n\n## Other\ntext\n";
        assert_eq!(
            insert_memory(t, "- new"),
            "# Ctx\n\n## Agent Memories\n\n- old\n- new\n\n## Other\ntext\n"
        );
        assert_eq!(insert_memory("", "- a"), "## Agent Memories\n\n- a\n");
        assert_eq!(
            insert_memory("# Title\n", "- a"),
            "# Title\n\n## Agent Memories\n\n- a\n"
        );
    }
}
