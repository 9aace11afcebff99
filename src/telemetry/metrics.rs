//! The run's metrics, recorded from each finished task's transcript (off
//! the agent loop, like the spans): the GenAI conventions'
//! `gen_ai.client.token.usage` and `gen_ai.client.operation.duration` per
//! model request, and counters of tool calls by decision, denials by rule,
//! cost in US dollars and task outcomes.
//!
//! They aggregate in the SDK and are read on demand ([`Metrics::collect`])
//! by the exporter's worker, after each task and at the end of the run.

use std::sync::{Arc, Weak};
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram, Meter, MeterProvider};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::reader::MetricReader;
use opentelemetry_sdk::metrics::{
    InstrumentKind, ManualReader, Pipeline, SdkMeterProvider, Temporality,
};
use runner_output::{CallStatus, Transcript, Verdict};

use super::spans::provider_and_model;

/// A reader the provider and the exporter's worker share.
#[derive(Debug, Clone)]
struct SharedReader(Arc<ManualReader>);

impl MetricReader for SharedReader {
    fn register_pipeline(&self, pipeline: Weak<Pipeline>) {
        self.0.register_pipeline(pipeline)
    }
    fn collect(&self, rm: &mut ResourceMetrics) -> OTelSdkResult {
        self.0.collect(rm)
    }
    fn force_flush(&self) -> OTelSdkResult {
        self.0.force_flush()
    }
    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.0.shutdown_with_timeout(timeout)
    }
    fn temporality(&self, kind: InstrumentKind) -> Temporality {
        self.0.temporality(kind)
    }
}

/// The run's instruments.
pub struct Metrics {
    // Kept: dropping the provider would stop the instruments.
    _provider: SdkMeterProvider,
    reader: SharedReader,
    tokens: Histogram<u64>,
    duration: Histogram<f64>,
    calls: Counter<u64>,
    denials: Counter<u64>,
    cost: Counter<f64>,
    tasks: Counter<u64>,
}

impl Metrics {
    pub fn new(resource: Resource) -> Self {
        let reader = SharedReader(Arc::new(ManualReader::builder().build()));
        let provider = SdkMeterProvider::builder()
            .with_resource(resource)
            .with_reader(reader.clone())
            .build();
        let meter: Meter = provider.meter("runner");
        Self {
            tokens: meter
                .u64_histogram("gen_ai.client.token.usage")
                .with_unit("{token}")
                .with_description("Tokens of each model request, by type (input, output)")
                .with_boundaries(vec![
                    1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0,
                    1048576.0, 4194304.0, 16777216.0, 67108864.0,
                ])
                .build(),
            duration: meter
                .f64_histogram("gen_ai.client.operation.duration")
                .with_unit("s")
                .with_description("How long each model request took")
                .with_boundaries(vec![
                    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48,
                    40.96, 81.92,
                ])
                .build(),
            calls: meter
                .u64_counter("runner.tool.calls")
                .with_unit("{call}")
                .with_description("Tool calls, by tool, decision and outcome")
                .build(),
            denials: meter
                .u64_counter("runner.policy.denials")
                .with_unit("{call}")
                .with_description("Denied tool calls, by rule")
                .build(),
            cost: meter
                .f64_counter("runner.cost")
                .with_unit("USD")
                .with_description("What the model requests cost, in US dollars")
                .build(),
            tasks: meter
                .u64_counter("runner.tasks")
                .with_unit("{task}")
                .with_description("Finished tasks, by outcome")
                .build(),
            _provider: provider,
            reader,
        }
    }

    /// Records a finished task.
    pub fn record(&self, t: &Transcript) {
        let (provider, model) = provider_and_model(&t.model);
        let base = [
            KeyValue::new("gen_ai.operation.name", "chat"),
            KeyValue::new("gen_ai.provider.name", provider),
            KeyValue::new("gen_ai.request.model", model.to_string()),
        ];
        for turn in &t.turns {
            // The model that answered: a fallback's, once the task switched.
            let base = match turn.model.as_deref().map(provider_and_model) {
                Some((provider, model)) => [
                    KeyValue::new("gen_ai.operation.name", "chat"),
                    KeyValue::new("gen_ai.provider.name", provider),
                    KeyValue::new("gen_ai.request.model", model.to_string()),
                ],
                None => base.clone(),
            };
            let with = |kind: &'static str| {
                let mut a = base.to_vec();
                a.push(KeyValue::new("gen_ai.token.type", kind));
                a
            };
            self.tokens.record(turn.usage.input_tokens, &with("input"));
            self.tokens
                .record(turn.usage.output_tokens, &with("output"));
            self.duration
                .record(turn.duration_ms as f64 / 1000.0, &base);
        }
        if let Some(cost) = t.usage.cost_usd {
            self.cost.add(cost, &base);
        }
        for c in &t.tool_calls {
            let decision = match c.decision.as_ref().map(|d| d.verdict) {
                Some(Verdict::Allow) => "allow",
                Some(Verdict::Deny) => "deny",
                None => "not_asked",
            };
            let outcome = c.status.as_str();
            self.calls.add(
                1,
                &[
                    KeyValue::new("gen_ai.tool.name", c.tool.clone()),
                    KeyValue::new("runner.policy.decision", decision),
                    KeyValue::new("runner.tool.outcome", outcome),
                ],
            );
            if c.status == CallStatus::Denied
                && let Some(d) = &c.decision
            {
                self.denials.add(
                    1,
                    &[
                        KeyValue::new(
                            "runner.policy.rule",
                            d.rule.clone().unwrap_or_else(|| "(no rule)".into()),
                        ),
                        KeyValue::new("runner.policy.layer", d.policy.clone().unwrap_or_default()),
                        KeyValue::new("gen_ai.tool.name", c.tool.clone()),
                    ],
                );
            }
        }
        self.tasks.add(
            1,
            &[KeyValue::new("runner.outcome", t.outcome.status.as_str())],
        );
    }

    /// What the instruments hold now (cumulative).
    pub fn collect(&self) -> Option<ResourceMetrics> {
        let mut rm = ResourceMetrics::default();
        self.reader.collect(&mut rm).ok()?;
        Some(rm)
    }
}
