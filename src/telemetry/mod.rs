//! OpenTelemetry: a run's traces and metrics, sent over OTLP to the
//! collector a team already has. Off unless asked ([`settings`]); when on,
//! nothing is added to the agent loop: each task's spans and metrics are
//! built from its transcript when it finishes ([`spans`], [`metrics`]) and
//! sent by a worker ([`exporter`]) bounded in time.
//!
//! What does happen while a task runs is context propagation
//! ([`context`]): commands, hooks, checks and MCP servers get the
//! `TRACEPARENT` of the span that started them, whose ids are derived, not
//! drawn ([`ids`]), so their spans and ours meet in one trace, under the
//! CI's own `TRACEPARENT` when it set one.

pub mod context;
pub mod exporter;
pub mod ids;
pub mod metrics;
pub mod settings;
pub mod spans;

use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use opentelemetry::trace::{SpanId, TraceId, TraceState};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::Resource;
use runner_output::{TraceIds, Transcript};

pub use exporter::{ExporterError, Tally};
pub use settings::{Settings, SettingsError};

use context::TaskContext;
use exporter::Exporter;
use ids::TraceParent;
use metrics::Metrics;
use spans::{SpanOptions, TaskPlace};

/// The run's telemetry: its trace, its instruments, its exporter.
pub struct Telemetry {
    trace_id: TraceId,
    run_span: SpanId,
    /// The CI's span the run continues.
    parent: Option<SpanId>,
    sampled: bool,
    trace_state: TraceState,
    trace_state_text: Option<Arc<str>>,
    scope: InstrumentationScope,
    options: SpanOptions,
    metrics: Metrics,
    exporter: Exporter,
    /// The run's first start and last end seen, and tasks passed/seen.
    seen: Mutex<Seen>,
    started: SystemTime,
}

#[derive(Default)]
struct Seen {
    window: Option<(SystemTime, SystemTime)>,
    tasks: usize,
    passed: usize,
}

/// The attributes every span and metric carries: the service, and the
/// CI's run when the run is a GitHub Actions job.
pub fn resource(env: &dyn Fn(&str) -> Option<String>) -> Resource {
    let mut b = Resource::builder();
    let named = env("OTEL_SERVICE_NAME").is_some()
        || env("OTEL_RESOURCE_ATTRIBUTES").is_some_and(|a| a.contains("service.name="));
    if !named {
        b = b.with_service_name("runner");
    }
    let mut attrs = vec![KeyValue::new("service.version", env!("CARGO_PKG_VERSION"))];
    if env("GITHUB_ACTIONS").is_some_and(|v| v == "true") {
        let var = |k: &str| env(k).filter(|v| !v.is_empty());
        let mut add = |key: &'static str, value: Option<String>| {
            if let Some(v) = value {
                attrs.push(KeyValue::new(key, v));
            }
        };
        let server = var("GITHUB_SERVER_URL").unwrap_or_else(|| "https://github.com".into());
        let repo = var("GITHUB_REPOSITORY");
        add("cicd.pipeline.name", var("GITHUB_WORKFLOW"));
        add("cicd.pipeline.run.id", var("GITHUB_RUN_ID"));
        add(
            "cicd.pipeline.run.url.full",
            repo.as_ref()
                .zip(var("GITHUB_RUN_ID"))
                .map(|(r, id)| format!("{server}/{r}/actions/runs/{id}")),
        );
        add("cicd.pipeline.task.name", var("GITHUB_JOB"));
        add("cicd.worker.name", var("RUNNER_NAME"));
        add(
            "vcs.repository.url.full",
            repo.as_ref().map(|r| format!("{server}/{r}")),
        );
        add(
            "vcs.repository.name",
            repo.as_ref()
                .map(|r| r.rsplit('/').next().unwrap_or(r).to_string()),
        );
        add("vcs.ref.head.revision", var("GITHUB_SHA"));
        add("vcs.ref.head.name", var("GITHUB_REF_NAME"));
        add("github.repository", repo.clone());
        add("github.run_attempt", var("GITHUB_RUN_ATTEMPT"));
        add("github.event_name", var("GITHUB_EVENT_NAME"));
    }
    b.with_attributes(attrs).build()
}

/// The trace a run continues, or its own.
#[derive(Debug, Clone, Copy)]
pub struct RunTrace {
    pub trace_id: TraceId,
    pub run_span: SpanId,
    pub parent: Option<SpanId>,
    pub sampled: bool,
}

impl RunTrace {
    /// Continues the CI's `TRACEPARENT` when it holds a valid one.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Self {
        match env("TRACEPARENT").as_deref().and_then(TraceParent::parse) {
            Some(tp) => Self {
                trace_id: tp.trace_id,
                run_span: ids::random_span_id(),
                parent: Some(tp.span_id),
                sampled: tp.sampled,
            },
            None => Self::fresh(),
        }
    }

    /// A new trace.
    pub fn fresh() -> Self {
        Self {
            trace_id: ids::random_trace_id(),
            run_span: ids::random_span_id(),
            parent: None,
            sampled: true,
        }
    }

    /// The run a transcript's ids name.
    pub fn of(ids: &TraceIds) -> Option<Self> {
        Some(Self {
            trace_id: TraceId::from_hex(&ids.trace_id).ok()?,
            run_span: SpanId::from_hex(&ids.run_span_id).ok()?,
            parent: match &ids.run_parent_span_id {
                Some(p) => Some(SpanId::from_hex(p).ok()?),
                None => None,
            },
            sampled: true,
        })
    }
}

impl Telemetry {
    /// Starts the exporter for a run (on the current runtime).
    pub fn start(
        settings: &Settings,
        run: RunTrace,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Arc<Self>, ExporterError> {
        let resource = resource(env);
        let trace_state_text: Option<Arc<str>> = env("TRACESTATE")
            .filter(|s| !s.trim().is_empty() && run.parent.is_some())
            .map(Arc::from);
        let trace_state = trace_state_text
            .as_deref()
            .and_then(|s| s.parse().ok())
            .unwrap_or_default();
        Ok(Arc::new(Self {
            trace_id: run.trace_id,
            run_span: run.run_span,
            parent: run.parent,
            sampled: run.sampled,
            trace_state,
            trace_state_text,
            scope: InstrumentationScope::builder("runner")
                .with_version(env!("CARGO_PKG_VERSION"))
                .build(),
            options: SpanOptions {
                content: settings.content,
            },
            metrics: Metrics::new(resource.clone()),
            exporter: Exporter::start(settings, &resource)?,
            seen: Mutex::default(),
            started: SystemTime::now(),
        }))
    }

    /// Where the exports go, for messages.
    pub fn target(&self) -> &str {
        &self.exporter.target
    }

    /// Task `name`'s ids in this run (kept in its transcript).
    pub fn task_ids(&self, name: &str) -> TraceIds {
        TraceIds {
            trace_id: self.trace_id.to_string(),
            span_id: ids::task_span(self.run_span, name).to_string(),
            run_span_id: self.run_span.to_string(),
            run_parent_span_id: self.parent.map(|p| p.to_string()),
        }
    }

    /// The context task `name`'s commands run under.
    pub fn task_context(&self, name: &str) -> TaskContext {
        TaskContext {
            trace_id: self.trace_id,
            task_span: ids::task_span(self.run_span, name),
            sampled: self.sampled,
            trace_state: self.trace_state_text.clone(),
        }
    }

    /// Queues a finished task's spans and metrics. Returns at once.
    pub fn task_finished(&self, t: &Transcript) {
        let task_span = t
            .trace
            .as_ref()
            .and_then(|ids| SpanId::from_hex(&ids.span_id).ok())
            .filter(|_| {
                t.trace
                    .as_ref()
                    .is_some_and(|i| i.trace_id == self.trace_id.to_string())
            })
            .unwrap_or_else(|| ids::task_span(self.run_span, &t.task));
        let place = TaskPlace {
            trace_id: self.trace_id,
            task_span,
            run_span: self.run_span,
            sampled: self.sampled,
            trace_state: self.trace_state.clone(),
        };
        let spans = spans::task_spans(t, &place, &self.scope, self.options);
        self.metrics.record(t);
        {
            let start = spans::task_start(t);
            let end = start + std::time::Duration::from_millis(t.duration_ms);
            let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
            seen.window = Some(match seen.window {
                Some((a, b)) => (a.min(start), b.max(end)),
                None => (start, end),
            });
            seen.tasks += 1;
            seen.passed += usize::from(t.outcome.status == runner_output::OutcomeStatus::Passed);
        }
        self.exporter.spans(spans);
        if let Some(rm) = self.metrics.collect() {
            self.exporter.metrics(rm);
        }
    }

    /// Sends the run's root span and waits for the exports, at most the
    /// settings' timeout. `live`: the run span covers this process's run;
    /// otherwise (`runner export`) the transcripts' times.
    pub async fn finish(&self, live: bool) -> Tally {
        let (window, tasks, passed) = {
            let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
            (seen.window, seen.tasks, seen.passed)
        };
        let window = match (live, window) {
            (true, _) | (false, None) => (self.started, SystemTime::now()),
            (false, Some(w)) => w,
        };
        let place = TaskPlace {
            trace_id: self.trace_id,
            task_span: self.run_span,
            run_span: self.run_span,
            sampled: self.sampled,
            trace_state: self.trace_state.clone(),
        };
        self.exporter.spans(vec![spans::run_span(
            &place,
            self.parent,
            &self.scope,
            window,
            tasks,
            passed,
        )]);
        self.exporter.finish().await
    }
}
