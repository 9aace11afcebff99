//! The agent bench's turn measurements: a turn's cost over the model's
//! latency against a fake server of each vendor's wire format (with
//! telemetry on, too), and what a task's journal costs turns that write.

use std::time::Duration;

use super::fake_model::{Call, Wire, fake_collector, fake_model};
use crate::{median, ms, row, run_task, scripted_task, timed};

pub fn turn_overhead() {
    for wire in [Wire::OpenAi, Wire::Anthropic, Wire::Gemini] {
        turn_overhead_of(wire, None);
    }
    if std::env::var_os("BENCH_RUNNER").is_none() {
        // The same run exporting its telemetry (issue 33) to a collector
        // on 127.0.0.1: built from the transcript at the task's end, so
        // the turns should not see it.
        let (port, _collector) = fake_collector();
        turn_overhead_of(Wire::OpenAi, Some(port));
    }
}

fn turn_overhead_of(wire: Wire, collector: Option<u16>) {
    let latency = Duration::from_millis(50);
    let turns = 40;
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("e2e");
    let (port, _server) = fake_model(wire, latency, turns, Call::Ls);
    let (model, envs) = wire.model_and_env(port);
    let mut envs = envs.to_vec();
    if let Some(c) = collector {
        envs.push((
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{c}"),
        ));
    }
    scripted_task(
        &dir,
        "  - text: unused\n",
        &format!("model: {model}\nmodel_options: {{stream: false}}\n"),
    );
    run_task(&dir, &envs);
    let calls = std::fs::read_to_string(dir.join("out/t/transcript.json")).unwrap();
    let calls: serde_json::Value = serde_json::from_str(&calls).unwrap();
    assert_eq!(
        calls["counts"]["tool_calls"],
        turns,
        "{}: the fake's calls did not all run",
        wire.name()
    );
    let wall = timed(|| {
        run_task(&dir, &envs);
    });
    // A run is `turns + 1` model answers; the workspace copy, outputs and
    // process start are in the total, so this is an upper bound.
    let answers = turns as u32 + 1;
    let per_turn = wall / answers;
    row(
        &format!(
            "end-to-end turn against a fake {} server ({turns} turns of one ls call){}",
            wire.name(),
            if collector.is_some() {
                ", telemetry on (OTLP/HTTP to a local collector)"
            } else {
                ""
            }
        ),
        format!(
            "{:.2} ms over the latency",
            (per_turn.saturating_sub(latency)).as_secs_f64() * 1000.0
        ),
        format!("{} ms latency per answer", latency.as_millis()),
        format!("{} per turn in all", ms(per_turn)),
        "small against the model",
    );
}

/// What a task's journal costs turns that write (issue 48): 40 turns of
/// one `write_file` in a workspace of 5,000 files, against a fake OpenAI
/// server answering after 50 ms. Each turn's end the journal reads the
/// copy's diff, while the model is asked the next turn. The second figure
/// is the runner's own time between one answer and the next request (the
/// transcript's turn records), where a diff read before the request would
/// show. Compare with `BENCH_RUNNER` set to a build without the journal.
pub fn journal_overhead() {
    let latency = Duration::from_millis(50);
    let turns = 40;
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("e2e");
    let (port, _server) = fake_model(Wire::OpenAi, latency, turns, Call::Write);
    let (model, envs) = Wire::OpenAi.model_and_env(port);
    scripted_task(
        &dir,
        "  - text: unused\n",
        &format!("model: {model}\nmodel_options: {{stream: false}}\npolicy: {{default: allow}}\n"),
    );
    for i in 0..5_000 {
        let sub = dir.join(format!("ws/d{}", i % 50));
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(
            sub.join(format!("f{i}.txt")),
            format!("line {i}\n").repeat(20),
        )
        .unwrap();
    }
    run_task(&dir, &envs);
    let read = || -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/t/transcript.json")).unwrap())
            .unwrap()
    };
    assert_eq!(
        read()["counts"]["tool_calls"],
        turns,
        "the writes did not all run"
    );
    let mut gaps = Vec::new();
    let wall = timed(|| {
        run_task(&dir, &envs);
        gaps.extend(answer_gaps(&read()));
    });
    let per_turn = wall / (turns as u32 + 1);
    row(
        "end-to-end turn of one write_file in a workspace of 5,000 files, fake OpenAI server (40 turns)",
        format!(
            "{:.2} ms over the latency",
            per_turn.saturating_sub(latency).as_secs_f64() * 1000.0
        ),
        format!("{} ms latency per answer", latency.as_millis()),
        format!(
            "{} per turn in all; the runner's own time between an answer and the next request: {} (median)",
            ms(per_turn),
            ms(median(gaps))
        ),
        "the journal's diff hidden behind the model",
    );
}

/// The runner's own time between each answer of a run and its next
/// request, from the transcript's turn records.
pub fn answer_gaps(t: &serde_json::Value) -> Vec<Duration> {
    let r = t["turns"].as_array().unwrap();
    let at = |i: usize, k: &str| r[i][k].as_u64().unwrap();
    (0..r.len().saturating_sub(1))
        .map(|i| {
            let end = at(i, "started_ms") + at(i, "duration_ms");
            Duration::from_millis(at(i + 1, "started_ms").saturating_sub(end))
        })
        .collect()
}
