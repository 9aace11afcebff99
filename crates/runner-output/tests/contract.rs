//! The output crate stays light (no async runtime, HTTP, MCP or command
//! line among its dependencies), and its types read what runner writes.

use runner_output::{CallStatus, ChangeKind, Message, Mode, OutcomeStatus, Transcript};
use serde_json::json;

#[test]
fn no_runtime_http_mcp_or_cli_dependency() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "-p",
            "runner-output",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8(out.stdout).unwrap();
    assert!(tree.contains("runner-policy"), "{tree}");
    for banned in ["tokio", "reqwest", "rmcp", "clap"] {
        assert!(
            !tree.lines().any(|l| l.split(' ').next() == Some(banned)),
            "runner-output depends on {banned}:\n{tree}"
        );
    }
}

/// A transcript as runner writes it (one denied call, one changed file)
/// reads into the typed enums and writes back the same JSON.
#[test]
fn a_transcript_round_trips_through_the_types() {
    let written = json!({
        "version": 1, "task": "t", "task_file": "tasks/t.yaml", "model": "scripted",
        "workspace": ".", "mode": "plan", "started_at": "2026-11-23T00:00:00Z",
        "duration_ms": 5, "policies": ["p.yaml"], "system_prompt": "s",
        "sandbox": "off",
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "text": "", "tool_calls": [
                {"id": "c1", "name": "bash", "arguments": {"command": "rm -rf /"}}]},
            {"role": "tool", "call_id": "c1", "name": "bash", "content": "denied", "is_error": true}
        ],
        "turns": [],
        "tool_calls": [{
            "id": "c1", "tool": "bash", "turn": 1, "batch": 1,
            "arguments": {"command": "rm -rf /"},
            "decision": null, "status": "denied", "error_kind": "permission",
            "content": "denied", "display": "denied: bash", "started_ms": 1, "duration_ms": 0
        }],
        "checks": [],
        "usage": {"input_tokens": 10, "output_tokens": 2, "cached_input_tokens": 4,
                  "cache_write_input_tokens": 3, "cost_usd": 0.0001},
        "counts": {"attempts": 1, "turns": 1, "tool_calls": 1, "denied_calls": 1, "failed_calls": 0},
        "changes": [{"path": "a.txt", "change": "modified"}],
        "final_answer": "done",
        "outcome": {"status": "failed", "reason": "r"}
    });
    let t: Transcript = serde_json::from_value(written.clone()).unwrap();
    assert_eq!(t.mode, Mode::Plan);
    assert_eq!(t.changes[0].change, ChangeKind::Modified);
    assert_eq!(t.tool_calls[0].status, CallStatus::Denied);
    assert_eq!(t.outcome.status, OutcomeStatus::Failed);
    assert!(matches!(
        &t.messages[2],
        Message::Tool { is_error: true, .. }
    ));
    assert_eq!(serde_json::to_value(&t).unwrap(), written);
    // A transcript from before a usage field was added still reads; the
    // field is 0.
    let mut older = written.clone();
    older["usage"]
        .as_object_mut()
        .unwrap()
        .remove("cache_write_input_tokens");
    let t: Transcript = serde_json::from_value(older).unwrap();
    assert_eq!(t.usage.cache_write_input_tokens, 0);
}
