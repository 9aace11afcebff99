//! A task's start: the first model request leaves while the workspace is
//! copied, no tool runs before the copy is ready, and the system prompt
//! is made without the copy (issue "Fast to start, fast to test").
//!
//! The copy is held back by the test-only `RUNNER_TEST_COPY_DELAY_MS`, so
//! what happens meanwhile is seen without depending on how fast a copy is.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{Value, json};

use crate::common::fake_llm::FakeServer;
use crate::common::wire::{self, Vendor, call, turn};
use crate::common::{events, read_json, runner, stderr, write};

const DELAY_MS: u64 = 1500;

fn task(dir: &Path, v: Vendor, extra: &str) {
    write(dir, "ws/a.txt", "alpha\n");
    write(dir, "ws/AGENTS.md", "Keep answers short.\n");
    write(
        dir,
        "task.yaml",
        &format!(
            "name: t\nprompt: Read a.txt.\nmodel: {}\nworkspace: ws\ntools: [read_file]\n{extra}",
            v.model()
        ),
    );
}

#[test]
fn the_first_request_leaves_before_the_copy_is_ready_and_no_tool_runs_before_it() {
    for v in [Vendor::OpenAi, Vendor::Anthropic, Vendor::Gemini] {
        let dir = tempfile::tempdir().unwrap();
        task(dir.path(), v, "");
        let replies = [
            wire::reply(
                v,
                &turn(
                    "",
                    vec![call("c1", "read_file", json!({"file_path": "a.txt"}))],
                ),
            ),
            wire::reply(v, &turn("It holds alpha.", vec![])),
        ];
        let arrived: Arc<Mutex<Option<Instant>>> = Arc::default();
        let first = arrived.clone();
        let server = FakeServer::start(move |_, n| {
            if n == 0 {
                *first.lock().unwrap() = Some(Instant::now());
            }
            replies[n.min(1)].clone()
        });
        let spawned = Instant::now();
        let out = wire::runner_for(v, &server.url(), "sk-test")
            .current_dir(dir.path())
            .env("RUNNER_TEST_COPY_DELAY_MS", DELAY_MS.to_string())
            .args(["run", "--format", "json", "--out", "out", "task.yaml"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{v:?}: {}", stderr(&out));
        let evs = events(&out);
        let at = |kind: &str| {
            evs.iter()
                .position(|e| e["event"] == kind)
                .unwrap_or_else(|| panic!("{v:?}: no {kind} in {evs:?}"))
        };
        let ready = at("workspace_ready");
        assert!(at("attempt_started") < at("turn_started"), "{v:?}");
        assert!(at("turn_started") < ready, "{v:?}: {evs:?}");
        assert!(at("tool_started") > ready, "{v:?}: {evs:?}");
        assert_eq!(evs[ready]["files"], 2, "{v:?}: {}", evs[ready]);
        // The copy was ready at least DELAY_MS after the process started;
        // the request was at the server well before.
        let ready_ms = evs[ready]["time_ms"].as_u64().unwrap();
        assert!(ready_ms >= DELAY_MS, "{v:?}: ready at {ready_ms} ms");
        let first = arrived.lock().unwrap().expect("a first request");
        let first_ms = first.duration_since(spawned).as_millis() as u64;
        assert!(
            first_ms + 500 < DELAY_MS,
            "{v:?}: the first request came {first_ms} ms after the start, the copy held {DELAY_MS} ms"
        );
        // The answer's call ran once the copy was there, and the
        // conversation went on as usual.
        let t = read_json(dir.path().join("out/t/transcript.json"));
        assert_eq!(t["tool_calls"][0]["status"], "ok", "{v:?}");
        assert_eq!(t["counts"]["turns"], 2, "{v:?}: {}", t["counts"]);
        let reqs = server.requests();
        assert_eq!(reqs.len(), 2, "{v:?}");
        let results = wire::tool_results(v, &reqs[1].body);
        assert!(results[0].1.contains("alpha"), "{v:?}: {results:?}");
        // The prompt names no temporary folder, and holds AGENTS.md.
        let system = t["system_prompt"].as_str().unwrap();
        assert!(!system.contains("runner-ws-"), "{v:?}: {system}");
        assert!(system.contains("Keep answers short."), "{v:?}: {system}");
        assert!(reqs[0].body.to_string().contains("Keep answers short."));
    }
}

/// The task's timeout holds while the copy is made, and the copy it cut
/// short leaves nothing behind.
#[test]
fn a_copy_slower_than_the_timeout_times_the_task_out_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    task(dir.path(), Vendor::OpenAi, "timeout: 1s\n");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let server = FakeServer::queue(vec![wire::reply(Vendor::OpenAi, &turn("done", vec![]))]);
    let out = wire::runner_for(Vendor::OpenAi, &server.url(), "sk-test")
        .current_dir(dir.path())
        .env("TMPDIR", &tmp)
        .env("RUNNER_TEST_COPY_DELAY_MS", "2500")
        .args(["run", "--out", "out", "task.yaml"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(75),
        "out of time: resumable {}",
        stderr(&out)
    );
    let t = read_json(dir.path().join("out/t/transcript.json"));
    assert_eq!(t["outcome"]["status"], "timeout", "{}", t["outcome"]);
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// AGENTS.md and CONTEXT.md are read from the original: not when the
/// policy denies reading them, not through a symlink that leads out.
#[test]
fn context_files_follow_the_policy_and_stay_inside() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "secret.md", "TOP SECRET\n");
    write(dir.path(), "ws/AGENTS.md", "AGENTS TEXT\n");
    std::os::unix::fs::symlink(
        dir.path().join("secret.md"),
        dir.path().join("ws/CONTEXT.md"),
    )
    .unwrap();
    let task = |policy: &str| {
        write(
            dir.path(),
            "task.yaml",
            &format!("name: t\nprompt: x\nworkspace: ws\n{policy}script:\n  - text: done\n"),
        );
        let out = runner()
            .current_dir(dir.path())
            .args(["run", "--quiet", "--out", "out", "task.yaml"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let t: Value = read_json(dir.path().join("out/t/transcript.json"));
        t["system_prompt"].as_str().unwrap().to_string()
    };
    let open = task("");
    assert!(open.contains("AGENTS TEXT"), "{open}");
    assert!(!open.contains("TOP SECRET"), "{open}");
    let denied = task("policy:\n  default: allow\n  rules:\n    - deny: [\"Read(AGENTS.md)\"]\n");
    assert!(!denied.contains("AGENTS TEXT"), "{denied}");
    // The positive control: a CONTEXT.md of the workspace's own is read.
    std::fs::remove_file(dir.path().join("ws/CONTEXT.md")).unwrap();
    write(dir.path(), "ws/CONTEXT.md", "CONTEXT TEXT\n");
    let own = task("");
    assert!(own.contains("CONTEXT TEXT"), "{own}");
    assert!(own.contains("AGENTS TEXT"), "{own}");
}
