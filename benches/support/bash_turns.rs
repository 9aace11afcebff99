//! A shell call's own cost (issue 71): turns of one `bash` call (`cat
//! small.txt`) against a fake OpenAI server, with every wall on (Landlock,
//! the supervisor following execs under a program deny rule) and with the
//! sandbox off, beside turns of one `ls` call. The figure is the runner's
//! own time between one answer and the next request (the transcript's
//! turn records): the call's whole cost, the command's run included.

use std::time::Duration;

use super::fake_model::{Call, Wire, fake_model};
use crate::{median, ms, row, run_task};

/// The medians of the gaps between an answer and the next request in
/// `rounds` runs of 40 turns of `call`, under `settings`.
fn own_time(call: Call, settings: &str) -> Duration {
    let latency = Duration::from_millis(20);
    let turns = 40;
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("e2e");
    let (port, _server) = fake_model(Wire::OpenAi, latency, turns, call);
    let (model, envs) = Wire::OpenAi.model_and_env(port);
    std::fs::create_dir_all(dir.join("ws")).unwrap();
    std::fs::write(dir.join("ws/small.txt"), "a small file\n").unwrap();
    std::fs::write(
        dir.join("task.yaml"),
        format!(
            "name: t\nprompt: bench\nworkspace: ws\nmax_turns: 1000\nmodel: {model}\nmodel_options: {{stream: false}}\n{settings}script:\n  - text: unused\n"
        ),
    )
    .unwrap();
    let mut gaps = Vec::new();
    for _ in 0..crate::rounds() {
        run_task(&dir, &envs);
        let t: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("out/t/transcript.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(t["counts"]["tool_calls"], turns, "{}", t["outcome"]);
        assert_eq!(t["counts"]["denied_calls"], 0, "{}", t["outcome"]);
        gaps.extend(super::turns::answer_gaps(&t));
    }
    median(gaps)
}

pub fn bash_turn_overhead() {
    let walls = "policy:\n  default: allow\n  rules:\n    - deny: [\"Bash(git push:*)\"]\n";
    let read = own_time(Call::Ls, walls);
    let off = own_time(Call::Bash, &format!("{walls}sandbox: off\n"));
    let on = own_time(Call::Bash, walls);
    let shared_tmp = own_time(
        Call::Bash,
        &format!("{walls}sandbox: {{private_tmp: false}}\n"),
    );
    row(
        "a `bash` turn's own time (`cat small.txt`), every wall on (Landlock, the supervisor following execs, a private /tmp)",
        ms(on),
        format!("an `ls` turn: {}", ms(read)),
        format!(
            "with `sandbox: off`: {}; without the private /tmp: {}",
            ms(off),
            ms(shared_tmp)
        ),
        "under 3 ms",
    );
}

/// Canaries' cost per turn (issue 76): the same `bash` turns with decoys
/// planted and every result scanned for them, and without.
pub fn canary_turn_overhead() {
    let walls = "policy:\n  default: allow\n  rules:\n    - deny: [\"Bash(git push:*)\"]\n";
    let on = own_time(Call::Bash, &format!("{walls}canaries: true\n"));
    let off = own_time(Call::Bash, &format!("{walls}canaries: false\n"));
    row(
        "a `bash` turn's own time with canaries (decoys in the environment and the home, each result scanned)",
        ms(on),
        format!("without: {}", ms(off)),
        format!(
            "{:+.2} ms",
            on.as_secs_f64() * 1e3 - off.as_secs_f64() * 1e3
        ),
        "within noise of off",
    );
}
