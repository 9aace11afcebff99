//! Sending spans and metrics: the OTLP exporters of `opentelemetry-otlp`
//! (HTTP protobuf over our reqwest, or gRPC over tonic) driven by one
//! worker task, so a slow or absent collector never holds a task up.
//!
//! Every export is bounded by the settings' timeout; at the end of the run
//! [`Exporter::finish`] waits for what is queued at most that long again,
//! then gives up and says what was lost. An export that fails never
//! changes a task's outcome.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry_otlp::{
    MetricExporter, SpanExporter, WithExportConfig, WithHttpConfig, WithTonicConfig,
};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::trace::{SpanData, SpanExporter as _};
use tokio::sync::mpsc;

use super::settings::{Protocol, Settings};

/// What the worker is asked to send.
enum Job {
    Spans(Vec<SpanData>),
    Metrics(Box<ResourceMetrics>),
}

/// What was sent and what was not.
#[derive(Debug, Default)]
pub struct Tally {
    pub spans_sent: usize,
    pub spans_lost: usize,
    pub metric_exports_sent: usize,
    pub metric_exports_failed: usize,
    /// The first failure, for the warning.
    pub first_error: Option<String>,
}

impl Tally {
    fn failed(&mut self, what: String) {
        self.first_error.get_or_insert(what);
    }

    /// One line for stderr when something was lost, naming where to.
    pub fn warning(&self, target: &str) -> Option<String> {
        let error = self.first_error.as_deref()?;
        Some(format!(
            "runner: telemetry: {} span(s) and {} metric export(s) not sent to {target}: {error}",
            self.spans_lost, self.metric_exports_failed
        ))
    }
}

/// Why the exporters could not be made (a bad endpoint, say).
#[derive(Debug, thiserror::Error)]
#[error("telemetry ({source_}): {message}")]
pub struct ExporterError {
    source_: String,
    message: String,
}

/// The run's exporters, behind their worker.
pub struct Exporter {
    /// Taken (closed) by [`Exporter::finish`].
    tx: Mutex<Option<mpsc::UnboundedSender<Job>>>,
    worker: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Updated by the worker as it goes, read at the end.
    tally: Arc<Mutex<Tally>>,
    queued: AtomicUsize,
    queued_metrics: AtomicUsize,
    timeout: Duration,
    /// Where to, for messages.
    pub target: String,
}

/// `base` with a signal's path, as `OTEL_EXPORTER_OTLP_ENDPOINT` is read.
fn signal_url(base: &str, path: &str) -> String {
    format!("{}/{path}", base.trim_end_matches('/'))
}

fn build(
    s: &Settings,
    resource: &Resource,
) -> Result<(SpanExporter, MetricExporter), opentelemetry_otlp::ExporterBuildError> {
    let headers: HashMap<String, String> = s.headers.clone().into_iter().collect();
    let (mut spans, metrics) = match s.protocol {
        Protocol::HttpProtobuf => {
            let client = || {
                crate::net::tls::client_builder()
                    .timeout(s.timeout)
                    .build()
                    .unwrap_or_default()
            };
            let mut sb = SpanExporter::builder()
                .with_http()
                .with_http_client(client())
                .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
                .with_timeout(s.timeout)
                .with_headers(headers.clone());
            let mut mb = MetricExporter::builder()
                .with_http()
                .with_http_client(client())
                .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
                .with_timeout(s.timeout)
                .with_headers(headers);
            if let Some(base) = &s.endpoint {
                sb = sb.with_endpoint(signal_url(base, "v1/traces"));
                mb = mb.with_endpoint(signal_url(base, "v1/metrics"));
            }
            (sb.build()?, mb.build()?)
        }
        Protocol::Grpc => {
            let mut map = reqwest::header::HeaderMap::new();
            for (k, v) in &s.headers {
                if let (Ok(k), Ok(v)) = (
                    reqwest::header::HeaderName::from_bytes(k.to_ascii_lowercase().as_bytes()),
                    reqwest::header::HeaderValue::from_str(v),
                ) {
                    map.insert(k, v);
                }
            }
            let metadata = || {
                opentelemetry_otlp::tonic_types::metadata::MetadataMap::from_headers(map.clone())
            };
            // TLS with the system's roots for an https:// collector, as
            // given or as the variables name it.
            let https = |e: &str| e.trim().starts_with("https://");
            let tls = match &s.endpoint {
                Some(e) => https(e),
                None => ["", "TRACES_", "METRICS_"].iter().any(|k| {
                    std::env::var(format!("OTEL_EXPORTER_OTLP_{k}ENDPOINT"))
                        .is_ok_and(|e| https(&e))
                }),
            };
            let tls_config = || {
                opentelemetry_otlp::tonic_types::transport::ClientTlsConfig::new()
                    .with_native_roots()
            };
            let mut sb = SpanExporter::builder()
                .with_tonic()
                .with_timeout(s.timeout)
                .with_metadata(metadata());
            let mut mb = MetricExporter::builder()
                .with_tonic()
                .with_timeout(s.timeout)
                .with_metadata(metadata());
            if tls {
                sb = sb.with_tls_config(tls_config());
                mb = mb.with_tls_config(tls_config());
            }
            if let Some(e) = &s.endpoint {
                sb = sb.with_endpoint(e.clone());
                mb = mb.with_endpoint(e.clone());
            }
            (sb.build()?, mb.build()?)
        }
    };
    spans.set_resource(resource);
    Ok((spans, metrics))
}

impl Exporter {
    /// Makes the exporters and starts their worker (on the current runtime).
    pub fn start(s: &Settings, resource: &Resource) -> Result<Self, ExporterError> {
        let (spans, metrics) = build(s, resource).map_err(|e| ExporterError {
            source_: s.source.clone(),
            message: e.to_string(),
        })?;
        let target = match &s.endpoint {
            Some(e) => e.clone(),
            None => std::env::var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
                .or_else(|_| std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT"))
                .unwrap_or_else(|_| match s.protocol {
                    Protocol::HttpProtobuf => "http://localhost:4318".into(),
                    Protocol::Grpc => "http://localhost:4317".into(),
                }),
        };
        let (tx, mut rx) = mpsc::unbounded_channel::<Job>();
        let timeout = s.timeout;
        let shared = Arc::new(Mutex::new(Tally::default()));
        let tally_of_worker = Arc::clone(&shared);
        let worker = tokio::spawn(async move {
            while let Some(job) = rx.recv().await {
                // Exported before the lock is taken: the lock is never held
                // across an await.
                let mut outcome = Tally::default();
                let tally = &mut outcome;
                match job {
                    Job::Spans(batch) => {
                        let n = batch.len();
                        match tokio::time::timeout(timeout, spans.export(batch)).await {
                            Ok(Ok(())) => tally.spans_sent += n,
                            Ok(Err(e)) => {
                                tally.spans_lost += n;
                                tally.failed(e.to_string());
                            }
                            Err(_) => {
                                tally.spans_lost += n;
                                tally.failed(format!("no answer in {timeout:?}"));
                            }
                        }
                    }
                    Job::Metrics(rm) => {
                        match tokio::time::timeout(timeout, metrics.export(&rm)).await {
                            Ok(Ok(())) => tally.metric_exports_sent += 1,
                            Ok(Err(e)) => {
                                tally.metric_exports_failed += 1;
                                tally.failed(e.to_string());
                            }
                            Err(_) => {
                                tally.metric_exports_failed += 1;
                                tally.failed(format!("no answer in {timeout:?}"));
                            }
                        }
                    }
                }
                let mut t = tally_of_worker.lock().unwrap_or_else(|e| e.into_inner());
                t.spans_sent += outcome.spans_sent;
                t.spans_lost += outcome.spans_lost;
                t.metric_exports_failed += outcome.metric_exports_failed;
                t.metric_exports_sent += outcome.metric_exports_sent;
                if let Some(e) = outcome.first_error {
                    t.failed(e);
                }
            }
        });
        Ok(Self {
            tx: Mutex::new(Some(tx)),
            worker: Mutex::new(Some(worker)),
            tally: shared,
            queued: AtomicUsize::new(0),
            queued_metrics: AtomicUsize::new(0),
            timeout,
            target,
        })
    }

    /// Queues spans; returns at once.
    pub fn spans(&self, batch: Vec<SpanData>) {
        self.queued.fetch_add(batch.len(), Ordering::Relaxed);
        self.send(Job::Spans(batch));
    }

    /// Queues a reading of the metrics; returns at once.
    pub fn metrics(&self, rm: ResourceMetrics) {
        self.queued_metrics.fetch_add(1, Ordering::Relaxed);
        self.send(Job::Metrics(Box::new(rm)));
    }

    fn send(&self, job: Job) {
        if let Some(tx) = &*self.tx.lock().unwrap_or_else(|e| e.into_inner()) {
            let _ = tx.send(job);
        }
    }

    /// Waits for what is queued, at most the timeout, and says what was
    /// sent. What is still queued then is counted as lost. Later calls
    /// send nothing.
    pub async fn finish(&self) -> Tally {
        drop(self.tx.lock().unwrap_or_else(|e| e.into_inner()).take());
        let worker = self.worker.lock().unwrap_or_else(|e| e.into_inner()).take();
        let mut timed_out = false;
        if let Some(mut w) = worker {
            timed_out = tokio::time::timeout(self.timeout, &mut w).await.is_err();
            w.abort();
        }
        let mut t = std::mem::take(&mut *self.tally.lock().unwrap_or_else(|e| e.into_inner()));
        let unsent = self
            .queued
            .load(Ordering::Relaxed)
            .saturating_sub(t.spans_sent + t.spans_lost);
        let unsent_metrics = self
            .queued_metrics
            .load(Ordering::Relaxed)
            .saturating_sub(t.metric_exports_sent + t.metric_exports_failed);
        if unsent > 0 || unsent_metrics > 0 || timed_out {
            t.spans_lost += unsent;
            t.metric_exports_failed += unsent_metrics;
            t.failed(format!(
                "the collector did not take everything within {:?}",
                self.timeout
            ));
        }
        t
    }
}
