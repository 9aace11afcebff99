//! `telemetry:` of a task or policy file: where a run's traces and metrics
//! go (OpenTelemetry, OTLP). A policy layer can ask for it so that every
//! task run under an organisation's policy is observed. This module is
//! the data; the runner exports.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::config_error::ConfigError;

/// How spans and metrics travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
pub enum TelemetryProtocol {
    /// OTLP over HTTP with protobuf bodies (`/v1/traces`, `/v1/metrics`),
    /// the standard's default.
    #[default]
    #[serde(rename = "http/protobuf")]
    HttpProtobuf,
    /// OTLP over gRPC.
    #[serde(rename = "grpc")]
    Grpc,
}

impl TelemetryProtocol {
    /// As `OTEL_EXPORTER_OTLP_PROTOCOL` writes it.
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "http/protobuf" => Some(Self::HttpProtobuf),
            "grpc" => Some(Self::Grpc),
            _ => None,
        }
    }
}

/// `telemetry:` as written. Its presence turns telemetry on.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TelemetryFile {
    /// The collector's base URL (`http://collector:4318`; gRPC:
    /// `http://collector:4317`). Default: `OTEL_EXPORTER_OTLP_ENDPOINT`.
    #[serde(default)]
    pub endpoint: Option<String>,
    /// `http/protobuf` (default) or `grpc`.
    #[serde(default)]
    pub protocol: Option<TelemetryProtocol>,
    /// Headers sent with every export; values may use `${NAME}`.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The longest an export may take, and the longest the run waits for
    /// its telemetry at the end (`5s`; default 10s).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub timeout: Option<Spanned<String>>,
    /// Also export prompts, answers, tool arguments and results, with
    /// secrets redacted (default false).
    #[serde(default)]
    pub content: bool,
}

/// `telemetry:`, checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Telemetry {
    /// The collector's base URL, when given.
    pub endpoint: Option<String>,
    /// The protocol, when given.
    pub protocol: Option<TelemetryProtocol>,
    /// Headers as written (`${NAME}` not yet expanded).
    pub headers: BTreeMap<String, String>,
    /// The export timeout, when given.
    pub timeout: Option<Duration>,
    /// Whether texts are exported too.
    pub content: bool,
}

/// Checks `telemetry:` of `file`: a bad timeout is an error at its line.
pub fn compile_telemetry(f: &TelemetryFile, file: &Path) -> Result<Telemetry, ConfigError> {
    let timeout = match &f.timeout {
        None => None,
        Some(t) => Some(crate::hooks::parse_timeout(&t.value).map_err(|e| {
            ConfigError::at(file, &t.referenced, format!("telemetry.timeout: {e}"))
        })?),
    };
    Ok(Telemetry {
        endpoint: f.endpoint.clone(),
        protocol: f.protocol,
        headers: f.headers.clone(),
        timeout,
        content: f.content,
    })
}
