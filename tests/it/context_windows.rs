//! Local servers size the window (issue 46, item 4): a fake
//! OpenAI-compatible server with a 4,096-token window, which refuses a
//! longer prompt as llama.cpp or vLLM word it, or tells its window when
//! asked (llama.cpp's `/props`, vLLM's `/v1/models`, Ollama's
//! `/api/show`). A task whose reads pass the window compacts and finishes.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::common::fake_llm::{FakeServer, Recorded, Reply};
use crate::common::wire::{self, Vendor, call, turn};
use crate::common::{read_json, stderr, write};

const WINDOW: u64 = 4096;

/// How the fake makes its window known.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Reveal {
    /// vLLM's and OpenAI's words in a 400: "maximum context length is N".
    Message,
    /// llama.cpp's 400: `exceed_context_size_error` with `n_ctx`.
    LlamaError,
    /// vLLM's `/v1/models` (`max_model_len`).
    VllmModels,
    /// llama.cpp's `/props` (`default_generation_settings.n_ctx`).
    LlamaProps,
    /// Ollama's `/api/show` (`num_ctx` in `parameters`).
    OllamaShow,
}

/// `n` lines of about 30 characters.
fn lines(n: usize) -> String {
    (0..n)
        .map(|i| format!("lorem ipsum dolor sit amet {i:03}\n"))
        .collect()
}

/// Three files of about 2,100 tokens each: one fits the window, two do
/// not.
fn setup(dir: &Path, options: &str) {
    for f in ["a", "b", "c"] {
        write(dir, &format!("ws/{f}.txt"), &lines(280));
    }
    write(
        dir,
        "task.yaml",
        &format!(
            "name: t\nprompt: Read a.txt, b.txt and c.txt, then say done.\nmodel: openai:local-model\nworkspace: ws\ntools: [read_file]\nmax_turns: 8\nmodel_options: {{{options}}}\n"
        ),
    );
}

/// The request's prompt tokens as the fake counts them: its messages'
/// JSON, four bytes a token.
fn prompt_tokens(r: &Recorded) -> u64 {
    (r.body["messages"].to_string().len() / 4) as u64
}

fn too_long(reveal: Reveal, n: u64) -> Reply {
    match reveal {
        Reveal::LlamaError => Reply::json(
            400,
            &json!({"error": {"code": 400, "type": "exceed_context_size_error",
                "message": "the request exceeds the available context size, try increasing it",
                "n_prompt_tokens": n, "n_ctx": WINDOW}}),
        ),
        // Servers that tell their window on request refuse as llama.cpp's
        // OpenAI-compatible endpoint does without a number.
        Reveal::Message => Reply::json(
            400,
            &json!({"object": "error", "type": "BadRequestError", "code": 400,
                "message": format!("This model's maximum context length is {WINDOW} tokens. \
                    However, you requested {n} tokens in the messages. Please reduce the length \
                    of the messages.")}),
        ),
        _ => Reply::json(
            400,
            &json!({"error": {"message": "context length exceeded", "type": "invalid_request_error"}}),
        ),
    }
}

fn probe_answer(reveal: Reveal, r: &Recorded) -> Reply {
    let ok = |v: Value| Reply::json(200, &v);
    match (reveal, r.path.as_str()) {
        (Reveal::VllmModels, "/v1/models") => ok(json!({"object": "list", "data": [
            {"id": "other", "object": "model", "max_model_len": 32768},
            {"id": "local-model", "object": "model", "max_model_len": WINDOW}]})),
        (Reveal::LlamaProps, "/props") => ok(json!({
            "default_generation_settings": {"n_ctx": WINDOW}, "total_slots": 1})),
        (Reveal::OllamaShow, "/api/show") if r.body["model"] == "local-model" => ok(json!({
            "parameters": format!("num_ctx                        {WINDOW}\nstop \"<|im_end|>\""),
            "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768}})),
        _ => Reply::json(404, &json!({"error": "not found"})),
    }
}

/// The fake: refuses a prompt over the window; reads a, b, c one turn
/// each, then says done; summarises when asked (a request without tools).
fn server(reveal: Reveal) -> (FakeServer, Arc<Mutex<Vec<u64>>>) {
    let refused: Arc<Mutex<Vec<u64>>> = Arc::default();
    let answered = Arc::new(Mutex::new(0usize));
    let r = refused.clone();
    let server = FakeServer::start(move |req, _| {
        let n = prompt_tokens(req);
        if n > WINDOW {
            r.lock().unwrap().push(n);
            return too_long(reveal, n);
        }
        let usage = |mut t: wire::Turn| {
            t.input_tokens = n;
            t
        };
        if req.body.get("tools").is_none() {
            return wire::reply(
                Vendor::OpenAi,
                &usage(turn("Read a.txt and b.txt so far.", vec![])),
            );
        }
        let mut k = answered.lock().unwrap();
        *k += 1;
        let t = match *k {
            1..=3 => {
                let f = ["a", "b", "c"][*k - 1];
                turn(
                    "",
                    vec![call(
                        &format!("c{k}"),
                        "read_file",
                        json!({"file_path": format!("{f}.txt")}),
                    )],
                )
            }
            _ => turn("done", vec![]),
        };
        wire::reply(Vendor::OpenAi, &usage(t))
    })
    .answer_probes(move |r| probe_answer(reveal, r));
    (server, refused)
}

fn run(dir: &Path, server: &FakeServer) -> (std::process::Output, Value) {
    let out = wire::runner_for(Vendor::OpenAi, &server.url(), "x")
        .current_dir(dir)
        .args(["run", "--out", "out", "task.yaml"])
        .output()
        .unwrap();
    let t = read_json(dir.join("out/t/transcript.json"));
    (out, t)
}

fn adaptations(t: &Value) -> String {
    t["server_adaptations"].to_string()
}

/// Runs the three reads against a fake that reveals its window so; the
/// task passes and says which window it learned. The transcript, and the
/// prompt sizes the fake refused.
fn fitted(reveal: Reveal) -> (Value, Vec<u64>) {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), "");
    let (server, refused) = server(reveal);
    let (out, t) = run(dir.path(), &server);
    assert_eq!(out.status.code(), Some(0), "{reveal:?}: {}", stderr(&out));
    assert_eq!(
        t["outcome"]["status"], "passed",
        "{reveal:?}: {}",
        t["outcome"]
    );
    assert!(
        adaptations(&t).contains("4096"),
        "{reveal:?}: {}",
        adaptations(&t)
    );
    // Asked once each at most, for the run.
    assert!(
        server.probes().len() <= 3,
        "{reveal:?}: {:?}",
        server.probes()
    );
    let refused = refused.lock().unwrap().clone();
    (t, refused)
}

/// The window named in a 400 (vLLM's words, llama.cpp's `n_ctx`) is the
/// task's from then on: the conversation is compacted to fit and sent
/// again, once.
#[test]
fn a_window_named_in_a_refusal_is_fitted() {
    for reveal in [Reveal::Message, Reveal::LlamaError] {
        let (t, refused) = fitted(reveal);
        assert_eq!(refused.len(), 1, "{reveal:?}: refused once");
        let compactions = t["compactions"].as_array().unwrap();
        assert!(
            compactions.iter().any(|c| c["trigger"] == "provider_error"),
            "{reveal:?}: {compactions:?}"
        );
    }
}

/// A window the server tells when asked is known before the prompt
/// reaches it: compacted at the threshold, never refused.
#[test]
fn a_window_a_local_server_tells_is_known_before_a_refusal() {
    for reveal in [Reveal::VllmModels, Reveal::LlamaProps, Reveal::OllamaShow] {
        let (t, refused) = fitted(reveal);
        assert_eq!(refused, Vec::<u64>::new(), "{reveal:?}");
        assert!(
            t["compactions"].as_array().is_some_and(|c| !c.is_empty()),
            "{reveal:?}: no compaction"
        );
    }
}

/// A read that cannot fit however the conversation is compacted fails
/// the task, and the reason names the window the runner used: the one
/// the server named, or the task's own (which a refusal does not change,
/// and for which no server is asked).
#[test]
fn the_reason_names_the_window_the_runner_used() {
    for (options, window) in [("", "4096"), ("context_window: 100000", "100000")] {
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path(), options);
        // a.txt alone is past the window.
        write(dir.path(), "ws/a.txt", &lines(700));
        let (server, _) = server(Reveal::Message);
        let (out, t) = run(dir.path(), &server);
        assert_eq!(out.status.code(), Some(1), "{options}: {}", stderr(&out));
        let reason = t["outcome"]["reason"].as_str().unwrap();
        assert!(
            reason.contains(&format!("({window} tokens)")),
            "{options}: {reason}"
        );
        assert!(!reason.contains("128000"), "{options}: {reason}");
        if !options.is_empty() {
            assert!(server.probes().is_empty(), "{:?}", server.probes());
            assert!(!adaptations(&t).contains("4096"), "{}", adaptations(&t));
        }
    }
}
