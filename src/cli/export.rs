//! `runner export OUT`: sends a finished run's transcripts to an
//! OpenTelemetry collector as the spans and metrics a traced run sends as
//! it goes: for a collector that was down during the run, or a run from
//! before telemetry was on. A transcript that kept its trace ids
//! (`trace`) is sent under them, so the spans are the ones the run sent.

use std::path::Path;

use super::merge::read_shard;
use super::{CliError, CliResult, Exit};
use crate::telemetry::{RunTrace, Telemetry, settings};

pub async fn export(out: &Path, otel: Option<&str>) -> CliResult {
    let found = read_shard(out)?;
    if found.is_empty() {
        return Err(CliError::Invalid(format!(
            "{}: no task transcripts to export",
            out.display()
        )));
    }
    let env = |k: &str| std::env::var(k).ok();
    // Asked for by running the command: on even without the variables
    // (the exporter's defaults then).
    let s = settings::resolve(Some(otel.unwrap_or("")), &[], env)
        .map_err(|e| CliError::Invalid(e.to_string()))?
        .expect("on when asked");
    // The run the transcripts share, when they do; a new one otherwise.
    let first = found[0].transcript.trace.as_ref();
    let shared = first.filter(|ids| {
        found.iter().all(|f| {
            f.transcript
                .trace
                .as_ref()
                .is_some_and(|t| t.trace_id == ids.trace_id && t.run_span_id == ids.run_span_id)
        })
    });
    let run = match shared.and_then(RunTrace::of) {
        Some(r) => r,
        None => RunTrace::from_env(&env),
    };
    let telemetry =
        Telemetry::start(&s, run, &env).map_err(|e| CliError::Invalid(e.to_string()))?;
    for f in &found {
        telemetry.task_finished(&f.transcript);
    }
    let tally = telemetry.finish(false).await;
    if let Some(w) = tally.warning(telemetry.target()) {
        return Err(CliError::Failed(
            w.trim_start_matches("runner: ").to_string(),
        ));
    }
    eprintln!(
        "runner: exported {} task(s), {} span(s), to {}",
        found.len(),
        tally.spans_sent,
        telemetry.target()
    );
    Ok(Exit::Passed)
}
