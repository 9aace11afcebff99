//! The system prompt: the workspace, the tools, the mode, the rules of the
//! road, and the repository's own AGENTS.md and CONTEXT.md.

use std::path::Path;

use crate::task::{Mode, Task};
use crate::tools::Registry;

const MAX_CONTEXT_FILE_CHARS: usize = 20_000;

fn read_capped(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    if text.chars().count() > MAX_CONTEXT_FILE_CHARS {
        let cut: String = text.chars().take(MAX_CONTEXT_FILE_CHARS).collect();
        Some(format!(
            "{cut}\n[... cut at {MAX_CONTEXT_FILE_CHARS} characters]"
        ))
    } else {
        Some(text)
    }
}

/// Builds the system prompt for a task working in `workspace`.
pub fn system_prompt(task: &Task, registry: &Registry, workspace: &Path) -> String {
    let mut s = String::new();
    s.push_str("You are a coding agent running non-interactively in a CI pipeline. Nobody will answer questions: decide, act with the tools, and finish with a short summary of what you did.\n\n");
    s.push_str(&format!(
        "Workspace: all paths are relative to the workspace root ({}). You cannot leave it.\n",
        workspace.display()
    ));
    match task.mode {
        Mode::Edit => s.push_str("Mode: edit. You may change files; your changes are collected as a diff for review.\n"),
        Mode::Plan => s.push_str("Mode: plan. Only read-only tools are available: investigate and answer, change nothing.\n"),
    }
    s.push_str(&format!(
        "Tools: {}.\n",
        registry.names().collect::<Vec<_>>().join(", ")
    ));
    s.push_str("\nRules of the road:\n");
    s.push_str("- Every tool call is checked against a policy. A denied call comes back as an error naming the rule; do not retry it, find another way.\n");
    s.push_str("- Read a file before you edit or overwrite it.\n");
    s.push_str("- Prefer edit_file for small changes; keep the file's style.\n");
    s.push_str("- Large results are saved to a file; page through it with read_file.\n");
    if !task.checks.is_empty() {
        s.push_str("- When you stop, these checks run; if they fail you will get their output:\n");
        for c in &task.checks {
            s.push_str(&format!("  - `{}`\n", c.run.lines().next().unwrap_or("")));
        }
    }
    for name in ["AGENTS.md", "CONTEXT.md"] {
        if let Some(text) = read_capped(&workspace.join(name)) {
            s.push_str(&format!("\n<{name}>\n{text}\n</{name}>\n"));
        }
    }
    s
}
