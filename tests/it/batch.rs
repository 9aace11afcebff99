//! `runner run --batch` (issue 46): the tasks' model requests go through
//! each vendor's batch API (fake ones on 127.0.0.1, as documented), one
//! batch per turn across the tasks, priced at half; a request the vendor
//! never ran fails its task only; a run cut short while a batch is pending
//! keeps its id, and `--resume` collects it instead of submitting again.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::fake_batch::{FakeBatches, Outcome};
use crate::common::wire::{self, ALL, Vendor, call, turn};
use crate::common::{read_json, stderr, write};

/// A one-turn labelling task whose answer must be `{"label": ...}`.
fn label_task(dir: &Path, v: Vendor, name: &str, extra: &str) {
    write(
        dir,
        &format!("tasks/{name}.yaml"),
        &format!(
            "name: {name}\nprompt: Label issue {name}.\nmodel: {}\nworkspace: ../ws\n\
             output_schema: {{type: object, required: [label], properties: {{label: {{type: string}}}}}}\n\
             model_options: {{pricing: {{input: 1.0, output: 2.0}}}}\n{extra}",
            v.model()
        ),
    );
}

/// The label the fake model gives a request: from the task named in it.
fn label_of(body: &Value) -> Outcome {
    let text = body.to_string();
    for name in ["alpha", "beta", "gamma"] {
        if text.contains(&format!("Label issue {name}.")) {
            return Outcome::Answer(turn(&format!("{{\"label\": \"{name}-bug\"}}"), vec![]));
        }
    }
    Outcome::Errored(format!("fake: no task in {text}"))
}

/// `runner run ARGS` in `d` against `fake`, as in CI.
fn run(v: Vendor, fake: &FakeBatches, d: &Path, args: &[&str]) -> std::process::Output {
    wire::runner_for(v, &fake.server.url(), "k")
        .current_dir(d)
        .arg("run")
        .args(args)
        .output()
        .unwrap()
}

/// The three labelling tasks.
const THREE: [&str; 3] = ["tasks/alpha.yaml", "tasks/beta.yaml", "tasks/gamma.yaml"];

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    dir
}

/// Several single-turn tasks with `output_schema` make one batch per
/// vendor and no direct request; each task's `output.json` is valid, its
/// turn is served by the batch tier and priced at half.
#[test]
fn single_turn_tasks_go_in_one_batch_per_vendor() {
    for v in ALL {
        let dir = setup();
        let d = dir.path();
        let fake = FakeBatches::start(v, 1, label_of);
        for name in ["alpha", "beta", "gamma"] {
            label_task(d, v, name, "");
        }
        let out = run(
            v,
            &fake,
            d,
            &[&["--batch", "--out", "out"][..], &THREE].concat(),
        );
        assert!(out.status.success(), "{v:?}: {}", stderr(&out));
        let batches = fake.batches();
        assert_eq!(batches.len(), 1, "{v:?}: {batches:?}");
        assert_eq!(batches[0].items.len(), 3, "{v:?}");
        assert_eq!(fake.direct(), 0, "{v:?}");
        for name in ["alpha", "beta", "gamma"] {
            let output = read_json(d.join(format!("out/{name}/output.json")));
            assert_eq!(output, json!({"label": format!("{name}-bug")}), "{v:?}");
            let t = read_json(d.join(format!("out/{name}/transcript.json")));
            let turn = &t["turns"][0];
            assert_eq!(turn["service_tier"], "batch", "{v:?}: {turn}");
            // 100 tokens in at $1/M and 20 out at $2/M, halved.
            let cost = turn["usage"]["cost_usd"].as_f64().unwrap();
            assert!((cost - 0.00007).abs() < 1e-9, "{v:?}: {cost}");
            assert!(t.get("pending_batch").is_none(), "{v:?}");
        }
    }
}

/// A two-turn task (a tool call, then the answer) beside another: one
/// batch per turn, each with both tasks' requests.
#[test]
fn a_multi_turn_task_sends_a_batch_per_turn() {
    let v = Vendor::Anthropic;
    let dir = setup();
    let d = dir.path();
    let fake = FakeBatches::start(v, 1, |body| {
        let text = body.to_string();
        let name = if text.contains("Task one") {
            "one"
        } else {
            "two"
        };
        // After the read, the file's text is in the conversation.
        if text.contains("tool_result") {
            Outcome::Answer(turn(&format!("{name} done"), vec![]))
        } else {
            Outcome::Answer(turn(
                "",
                vec![call(
                    &format!("c-{name}"),
                    "read_file",
                    json!({"file_path": "a.txt"}),
                )],
            ))
        }
    });
    for name in ["one", "two"] {
        write(
            d,
            &format!("tasks/{name}.yaml"),
            &format!(
                "name: {name}\nprompt: Task {name}, read a.txt.\nmodel: {}\nworkspace: ../ws\n",
                v.model()
            ),
        );
    }
    let out = run(
        v,
        &fake,
        d,
        &[
            "--batch",
            "--out",
            "out",
            "tasks/one.yaml",
            "tasks/two.yaml",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let batches = fake.batches();
    assert_eq!(batches.len(), 2, "{batches:?}");
    assert!(batches.iter().all(|b| b.items.len() == 2), "{batches:?}");
    assert_eq!(fake.direct(), 0);
    for name in ["one", "two"] {
        let t = read_json(d.join(format!("out/{name}/transcript.json")));
        assert_eq!(t["final_answer"], format!("{name} done"));
        assert_eq!(t["turns"].as_array().unwrap().len(), 2);
        assert_eq!(t["tool_calls"][0]["status"], "ok", "{}", t["tool_calls"]);
    }
}

/// A request the vendor let expire, and one it answered with an error,
/// fail their own tasks, naming the batch and the request; the other
/// tasks of the batch pass.
#[test]
fn an_expired_or_errored_request_fails_its_task_only() {
    for v in [Vendor::Anthropic, Vendor::OpenAi] {
        let dir = setup();
        let d = dir.path();
        let fake = FakeBatches::start(v, 0, |body| {
            if body.to_string().contains("Label issue beta.") {
                Outcome::Expired
            } else {
                // delta is no task the fake knows: it answers an error.
                label_of(body)
            }
        });
        for name in ["alpha", "beta", "gamma", "delta"] {
            label_task(d, v, name, "");
        }
        let mut args = vec!["--batch", "--out", "out"];
        args.extend(THREE);
        args.push("tasks/delta.yaml");
        let out = run(v, &fake, d, &args);
        // delta's refusal is for good: not a run to resume (75).
        assert_eq!(out.status.code(), Some(1), "{v:?}: {}", stderr(&out));
        assert_eq!(fake.batches().len(), 1, "{v:?}");
        let id = fake.batches()[0].id.clone();
        let reason = |name: &str| {
            let t = read_json(d.join(format!("out/{name}/transcript.json")));
            assert_eq!(t["outcome"]["status"], "error", "{v:?}: {name}");
            t["outcome"]["reason"].as_str().unwrap().to_string()
        };
        let beta = reason("beta");
        assert!(
            beta.contains("expired before the vendor ran it") && beta.contains(&id),
            "{v:?}: {beta}"
        );
        let delta = reason("delta");
        assert!(
            delta.contains("errored") && delta.contains("fake: no task") && delta.contains(&id),
            "{v:?}: {delta}"
        );
        for name in ["alpha", "gamma"] {
            let t = read_json(d.join(format!("out/{name}/transcript.json")));
            assert_eq!(t["outcome"]["status"], "passed", "{v:?}: {name}");
        }
    }
}

/// `batch: false` keeps a task interactive inside a batch run.
#[test]
fn a_task_may_stay_interactive() {
    let v = Vendor::OpenAi;
    let dir = setup();
    let d = dir.path();
    let fake = FakeBatches::start(v, 0, label_of);
    label_task(d, v, "alpha", "");
    write(
        d,
        "tasks/now.yaml",
        &format!(
            "name: now\nprompt: Say hi.\nmodel: {}\nworkspace: ../ws\nbatch: false\n",
            v.model()
        ),
    );
    let out = run(
        v,
        &fake,
        d,
        &[
            "--batch",
            "--out",
            "out",
            "tasks/alpha.yaml",
            "tasks/now.yaml",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(fake.direct(), 1);
    assert_eq!(fake.batches().len(), 1);
    assert_eq!(fake.batches()[0].items.len(), 1);
    let t = read_json(d.join("out/now/transcript.json"));
    assert_eq!(t["final_answer"], "answered at once");
    assert!(t["turns"][0]["service_tier"].is_null(), "{}", t["turns"][0]);
}

/// Waits (up to 30 s) until the fake has been polled `n` times.
fn wait_for_polls(fake: &FakeBatches, n: usize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while fake.polls() < n {
        assert!(std::time::Instant::now() < deadline, "never polled");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A run cut short while its batch is pending, by SIGTERM (the transcript
/// keeps the batch) or by SIGKILL (the journal does): `--resume` collects
/// that batch's answer, and submits nothing again.
#[test]
fn resume_collects_a_pending_batch_and_submits_nothing_again() {
    for signal in [libc::SIGTERM, libc::SIGKILL] {
        let v = Vendor::Anthropic;
        let dir = setup();
        let d = dir.path();
        let fake = FakeBatches::start(v, usize::MAX, label_of);
        label_task(d, v, "alpha", "");
        let mut child = wire::runner_for(v, &fake.server.url(), "k")
            .current_dir(d)
            .args(["run", "--batch", "--out", "out", "tasks/alpha.yaml"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        wait_for_polls(&fake, 1);
        // The batch is pending once the run has recorded it: the batcher
        // polls from its own task, which may run before the task's
        // journal line is written (seen under load in CI).
        let id = fake.batches()[0].id.clone();
        let journal = d.join("out/alpha/journal.jsonl");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !std::fs::read_to_string(&journal).is_ok_and(|j| j.contains(id.as_str())) {
            assert!(
                std::time::Instant::now() < deadline,
                "the batch was never journaled"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // SAFETY: a signal to the child this test started.
        unsafe { libc::kill(child.id() as i32, signal) };
        let status = child.wait().unwrap();
        assert!(!status.success(), "{signal}: {status:?}");
        let batch = fake.batches()[0].clone();
        if signal == libc::SIGTERM {
            let t = read_json(d.join("out/alpha/transcript.json"));
            assert_eq!(t["outcome"]["status"], "cancelled", "{t}");
            assert_eq!(t["pending_batch"]["id"], batch.id.as_str(), "{t}");
            assert_eq!(t["pending_batch"]["vendor"], "anthropic");
        } else {
            let journal = std::fs::read_to_string(d.join("out/alpha/journal.jsonl")).unwrap();
            assert!(journal.contains(&batch.id), "{journal}");
        }
        fake.end_all();
        let out = run(
            v,
            &fake,
            d,
            &["--batch", "--resume", "out", "tasks/alpha.yaml"],
        );
        assert!(out.status.success(), "{signal}: {}", stderr(&out));
        assert_eq!(fake.batches().len(), 1, "{signal}: submitted again");
        assert_eq!(fake.direct(), 0);
        let output = read_json(d.join("out/alpha/output.json"));
        assert_eq!(output, json!({"label": "alpha-bug"}));
        let t = read_json(d.join("out/alpha/transcript.json"));
        assert!(t.get("pending_batch").is_none(), "{t}");
        assert_eq!(t["turns"].as_array().unwrap().len(), 1, "{t}");
    }
}

/// A batch that does not end within `--batch-timeout` fails its tasks,
/// names the batch, and keeps its id for `--resume`.
#[test]
fn a_batch_past_its_timeout_is_kept_for_resume() {
    let v = Vendor::Gemini;
    let dir = setup();
    let d = dir.path();
    let fake = FakeBatches::start(v, usize::MAX, label_of);
    label_task(d, v, "alpha", "");
    let out = run(
        v,
        &fake,
        d,
        &[
            "--batch",
            "--batch-timeout",
            "2s",
            "--out",
            "out",
            "tasks/alpha.yaml",
        ],
    );
    assert_eq!(out.status.code(), Some(75), "{}", stderr(&out));
    let t = read_json(d.join("out/alpha/transcript.json"));
    let reason = t["outcome"]["reason"].as_str().unwrap();
    let id = fake.batches()[0].id.clone();
    assert!(
        reason.contains(&id)
            && reason.contains("--batch-timeout (2s)")
            && reason.contains("--resume"),
        "{reason}"
    );
    assert_eq!(t["pending_batch"]["id"], id.as_str());
    fake.end_all();
    let out = run(
        v,
        &fake,
        d,
        &["--batch", "--resume", "out", "tasks/alpha.yaml"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(fake.batches().len(), 1, "submitted again");
    let output = read_json(d.join("out/alpha/output.json"));
    assert_eq!(output, json!({"label": "alpha-bug"}));
}

/// A task on OpenAI's Responses API (`model_options.api: responses`) is
/// batched for `/v1/responses`, and its answers read in that API's shape.
#[test]
fn openai_batches_carry_the_requests_endpoint() {
    let v = Vendor::OpenAi;
    let dir = setup();
    let d = dir.path();
    let fake = FakeBatches::start(v, 0, label_of);
    for (name, api) in [("alpha", "responses"), ("beta", "chat")] {
        write(
            d,
            &format!("tasks/{name}.yaml"),
            &format!(
                "name: {name}\nprompt: Label issue {name}.\nmodel: {}\nworkspace: ../ws\n\
                 output_schema: {{type: object, required: [label], properties: {{label: {{type: string}}}}}}\n\
                 model_options: {{api: {api}}}\n",
                v.model()
            ),
        );
    }
    let out = run(
        v,
        &fake,
        d,
        &[
            "--batch",
            "--out",
            "out",
            "tasks/alpha.yaml",
            "tasks/beta.yaml",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let mut endpoints: Vec<String> = fake.batches().iter().map(|b| b.endpoint.clone()).collect();
    endpoints.sort();
    assert_eq!(endpoints, ["/v1/chat/completions", "/v1/responses"]);
    let responses = fake
        .batches()
        .into_iter()
        .find(|b| b.endpoint == "/v1/responses")
        .unwrap();
    let body = &responses.items[0].1;
    assert!(
        body["input"].is_array() && body["instructions"].is_string(),
        "{body}"
    );
    assert_eq!(body["stream"], false);
    for name in ["alpha", "beta"] {
        let output = read_json(d.join(format!("out/{name}/output.json")));
        assert_eq!(output, json!({"label": format!("{name}-bug")}));
    }
}
