//! Whether a run exports telemetry, and where to: `--otel`, a task file's
//! `telemetry:`, or the standard `OTEL_EXPORTER_OTLP_*` variables, in
//! that order of precedence. Off unless one of them asks.

use std::collections::BTreeMap;
use std::time::Duration;

use runner_policy::Telemetry;

pub use runner_policy::TelemetryProtocol as Protocol;

/// A `telemetry:` block, and the file it is in (a task's or a policy's).
#[derive(Debug, Clone, PartialEq)]
pub struct Block<'a> {
    pub telemetry: &'a Telemetry,
    /// The file, for messages.
    pub source: String,
}

/// What the run exports with.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The collector's base URL; `None`: the exporter reads the
    /// `OTEL_EXPORTER_OTLP_*` variables (signal-specific ones included).
    pub endpoint: Option<String>,
    pub protocol: Protocol,
    /// Header values expanded.
    pub headers: BTreeMap<String, String>,
    pub timeout: Duration,
    pub content: bool,
    /// What turned telemetry on, for messages.
    pub source: String,
}

/// The standard's default export timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Why the settings are unusable (exit 2 before anything runs).
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("{source_}: {message}")]
    Invalid { source_: String, message: String },
    #[error(
        "the tasks ask for different telemetry ({a} and {b}): one run exports to one place; give the same `telemetry:` or use --otel"
    )]
    Conflict { a: String, b: String },
}

/// The run's settings: `cli` is `--otel` (`Some("")` when given without
/// an endpoint), `blocks` the tasks' and their policies' `telemetry:`,
/// `env` the environment. `Ok(None)`: telemetry is off.
pub fn resolve(
    cli: Option<&str>,
    blocks: &[Block],
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<Settings>, SettingsError> {
    let var = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    let invalid = |source_: &str, message: String| SettingsError::Invalid {
        source_: source_.to_string(),
        message,
    };
    let first = match blocks.split_first() {
        None => None,
        Some((first, rest)) => {
            if let Some(other) = rest.iter().find(|b| b.telemetry != first.telemetry) {
                return Err(SettingsError::Conflict {
                    a: first.source.clone(),
                    b: other.source.clone(),
                });
            }
            Some(first)
        }
    };
    let task = first.map(|b| b.telemetry);
    let env_on = ["", "TRACES_", "METRICS_"]
        .iter()
        .any(|s| var(&format!("OTEL_EXPORTER_OTLP_{s}ENDPOINT")).is_some());
    let disabled = var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"));
    // `--otel` and a file's block are explicit; the variables are not
    // when the standard's own switch says off.
    if cli.is_none() && task.is_none() && (!env_on || disabled) {
        return Ok(None);
    }
    let source = match (cli, first) {
        (Some(_), _) => "--otel".to_string(),
        (None, Some(b)) => format!("{}: telemetry", b.source),
        (None, None) => "OTEL_EXPORTER_OTLP_ENDPOINT".to_string(),
    };
    let endpoint = cli
        .filter(|e| !e.is_empty())
        .map(str::to_string)
        .or_else(|| task.and_then(|t| t.endpoint.clone()));
    if let Some(e) = &endpoint
        && !(e.starts_with("http://") || e.starts_with("https://"))
    {
        return Err(invalid(
            &source,
            format!("endpoint `{e}` is not an http:// or https:// URL"),
        ));
    }
    let protocol = match task.and_then(|t| t.protocol) {
        Some(p) => p,
        None => match var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL"))
        {
            Some(p) => Protocol::parse(&p).ok_or_else(|| {
                invalid(
                    "OTEL_EXPORTER_OTLP_PROTOCOL",
                    format!("`{p}` is not a protocol runner sends (http/protobuf or grpc)"),
                )
            })?,
            None => Protocol::default(),
        },
    };
    let timeout = match task.and_then(|t| t.timeout) {
        Some(t) => t,
        None => match var("OTEL_EXPORTER_OTLP_TIMEOUT") {
            Some(ms) => ms
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|&ms| ms > 0)
                .map(Duration::from_millis)
                .ok_or_else(|| {
                    invalid(
                        "OTEL_EXPORTER_OTLP_TIMEOUT",
                        format!("`{ms}` is not a number of milliseconds above 0"),
                    )
                })?,
            None => DEFAULT_TIMEOUT,
        },
    };
    let mut headers = BTreeMap::new();
    if let Some(t) = task {
        for (k, v) in &t.headers {
            let value = crate::contain::vars::expand_env(v)
                .map_err(|e| invalid(&source, format!("headers.{k}: {e}")))?;
            headers.insert(k.clone(), value);
        }
    }
    let content = task.is_some_and(|t| t.content)
        || var("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    Ok(Some(Settings {
        endpoint,
        protocol,
        headers,
        timeout,
        content,
        source,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn off_unless_asked() {
        assert_eq!(resolve(None, &[], env(&[])).unwrap(), None);
        assert_eq!(
            resolve(None, &[], env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "")])).unwrap(),
            None
        );
        let on = [(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "http://c:4318/v1/traces",
        )];
        let s = resolve(None, &[], env(&on)).unwrap().unwrap();
        assert_eq!((s.endpoint, s.protocol), (None, Protocol::HttpProtobuf));
        assert_eq!(s.timeout, DEFAULT_TIMEOUT);
        let off = [on[0], ("OTEL_SDK_DISABLED", "true")];
        assert_eq!(resolve(None, &[], env(&off)).unwrap(), None);
    }

    #[test]
    fn the_cli_then_the_task_then_the_variables() {
        let vars = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
        ];
        let block = Telemetry {
            endpoint: Some("http://task:4318".into()),
            content: true,
            ..Default::default()
        };
        let task = [Block {
            telemetry: &block,
            source: "t.yaml".into(),
        }];
        let s = resolve(Some("http://cli:4318"), &task, env(&vars))
            .unwrap()
            .unwrap();
        assert_eq!(s.endpoint.as_deref(), Some("http://cli:4318"));
        assert_eq!(s.protocol, Protocol::Grpc);
        assert_eq!(s.timeout, Duration::from_millis(2500));
        assert!(s.content);
        let s = resolve(None, &task, env(&vars)).unwrap().unwrap();
        assert_eq!(s.endpoint.as_deref(), Some("http://task:4318"));
        assert_eq!(s.source, "t.yaml: telemetry");
    }

    #[test]
    fn bad_settings_are_named() {
        let e = resolve(
            Some(""),
            &[],
            env(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")]),
        )
        .unwrap_err();
        assert!(e.to_string().contains("OTEL_EXPORTER_OTLP_PROTOCOL"), "{e}");
        let e = resolve(Some("collector:4317"), &[], env(&[])).unwrap_err();
        assert!(e.to_string().contains("not an http"), "{e}");
        let (a, b) = (
            Telemetry {
                endpoint: Some("http://a".into()),
                ..Default::default()
            },
            Telemetry {
                endpoint: Some("http://b".into()),
                ..Default::default()
            },
        );
        let block = |t, source: &str| Block {
            telemetry: t,
            source: source.into(),
        };
        // A policy that agrees with its task is no conflict.
        let agree = [block(&a, "a.yaml"), block(&a, "policy.yaml")];
        assert!(resolve(None, &agree, env(&[])).is_ok());
        let differ = [
            block(&a, "a.yaml"),
            block(&a, "policy.yaml"),
            block(&b, "b.yaml"),
        ];
        let e = resolve(None, &differ, env(&[])).unwrap_err();
        assert!(e.to_string().contains("a.yaml and b.yaml"), "{e}");
        let h = Telemetry {
            headers: [("Authorization".into(), "Bearer ${NO_SUCH_VAR_X}".into())].into(),
            ..Default::default()
        };
        let e = resolve(None, &[block(&h, "h.yaml")], env(&[])).unwrap_err();
        assert!(e.to_string().contains("headers.Authorization"), "{e}");
    }
}
