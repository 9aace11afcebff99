//! The system prompt: the workspace, the tools, the mode, the rules of the
//! road, and the repository's own AGENTS.md and CONTEXT.md.

use std::io::Read;

use crate::task::{Mode, Task};
use crate::tools::Registry;
use crate::workspace::Workspace;
use runner_policy::PolicySet;

const MAX_CONTEXT_FILE_CHARS: usize = 20_000;

/// A context file of the original workspace, unless the policy denies
/// reading it (under either spelling, when it is a symlink), it resolves
/// outside the workspace, or it is not a readable file. Read from the
/// original, not the copy: the prompt is made while the copy is.
fn context_file(workspace: &Workspace, name: &str, policy: &PolicySet) -> Option<String> {
    let resolved = workspace.resolve(name).ok()?;
    if policy.read_denied(&resolved.rel)
        || resolved
            .real_rel
            .as_deref()
            .is_some_and(|r| policy.read_denied(r))
    {
        return None;
    }
    let mut text = String::new();
    workspace
        .open_read(&resolved.real)
        .ok()?
        .read_to_string(&mut text)
        .ok()?;
    if text.chars().count() > MAX_CONTEXT_FILE_CHARS {
        let cut: String = text.chars().take(MAX_CONTEXT_FILE_CHARS).collect();
        Some(format!(
            "{cut}\n[... cut at {MAX_CONTEXT_FILE_CHARS} characters]"
        ))
    } else {
        Some(text)
    }
}

/// Builds the system prompt of a task. It names no path of the run's own
/// (such as the copy's temporary folder): the same task gets the same
/// prompt on every run, which is what vendors' prompt caches match on.
pub fn system_prompt(task: &Task, registry: &Registry, policy: &PolicySet) -> String {
    let mut s = String::new();
    s.push_str("You are a coding agent running non-interactively in a CI pipeline. Nobody will answer questions: decide, act with the tools, and finish with a short summary of what you did.\n\n");
    s.push_str("Workspace: all paths are relative to the workspace root, the current directory of commands. You cannot leave it.\n");
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
    let workspace = Workspace::new(&task.workspace).ok();
    for name in ["AGENTS.md", "CONTEXT.md"] {
        if let Some(text) = workspace
            .as_ref()
            .and_then(|w| context_file(w, name, policy))
        {
            s.push_str(&format!("\n<{name}>\n{text}\n</{name}>\n"));
        }
    }
    s
}
