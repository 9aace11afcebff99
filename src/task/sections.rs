//! The sections of a task file that resolve on their own (`mcp_servers:`,
//! `sandbox:` and `limits:`, `model_options:`, durations): each takes the
//! parsed section and records its errors, located.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::duration::parse_duration;
use super::model::SandboxModeFile;
use super::model::{DurationText, LimitsFile, McpServerFile, ModelOptionsFile, SandboxFile};
use crate::contain::{SandboxMode, SandboxSettings};
use crate::mcp::McpServerSpec;
use crate::provider::config::OpenAiApi;
use crate::provider::tier::{self, ServiceTier};
use crate::provider::{ModelOptions, ToolCallContent, Vendor};
use runner_policy::ConfigError;
use serde_saphyr::Spanned;

/// `telemetry:`, checked (as a policy file's); its header values are
/// expanded when the run starts.
pub(super) fn telemetry(
    path: &Path,
    file: Option<&runner_policy::TelemetryFile>,
    errors: &mut Vec<ConfigError>,
) -> Option<runner_policy::Telemetry> {
    runner_policy::compile_telemetry(file?, path)
        .map_err(|e| errors.push(e))
        .ok()
}

/// An optional duration field: its value, or `default`; a bad value is an
/// error at its location.
pub(super) fn duration_field(
    path: &Path,
    value: &Option<Spanned<DurationText>>,
    field: &str,
    default: Duration,
    errors: &mut Vec<ConfigError>,
) -> Duration {
    let Some(v) = value else {
        return default;
    };
    parse_duration(&v.value.0).unwrap_or_else(|e| {
        errors.push(ConfigError::at(
            path,
            &v.referenced,
            format!("{field}: {e}"),
        ));
        default
    })
}

/// `mcp_servers:`, checked: names must be usable in `NAME__TOOL` and
/// `Mcp(NAME/TOOL)`.
pub(super) fn mcp_servers(
    path: &Path,
    dir: &Path,
    servers: &BTreeMap<String, Spanned<McpServerFile>>,
    errors: &mut Vec<ConfigError>,
) -> Vec<McpServerSpec> {
    let mut out = Vec::new();
    for (name, s) in servers {
        let valid = !name.is_empty()
            && !name.contains("__")
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid {
            errors.push(ConfigError::at(
                path,
                &s.referenced,
                format!(
                    "mcp_servers.{name}: a server name is letters, digits, `-` and `_` (no `__`)"
                ),
            ));
            continue;
        }
        let timeout = duration_field(
            path,
            &s.value.timeout,
            &format!("mcp_servers.{name}.timeout"),
            crate::mcp::DEFAULT_CALL_TIMEOUT,
            errors,
        );
        let f = &s.value;
        let at = |why: String| {
            ConfigError::at(path, &s.referenced, format!("mcp_servers.{name}: {why}"))
        };
        match (&f.command, &f.url) {
            (Some(_), Some(_)) | (None, None) => {
                errors.push(at(
                    "give `command:` (a server over stdio) or `url:` (a remote one), not both"
                        .into(),
                ));
                continue;
            }
            (None, Some(url)) => {
                if !(url.starts_with("https://") || url.starts_with("http://")) {
                    errors.push(at(format!("url `{url}` is not an http(s) address")));
                }
                if !f.args.is_empty() || !f.env.is_empty() || f.cwd.is_some() || f.sandbox.is_some()
                {
                    errors.push(at(
                        "args, env, cwd and sandbox are for a server over stdio, not a `url:`"
                            .into(),
                    ));
                }
            }
            (Some(_), None) => {
                if !f.headers.is_empty() {
                    errors.push(at("headers are for a remote server (`url:`)".into()));
                }
            }
        }
        out.push(McpServerSpec {
            name: name.clone(),
            command: s.value.command.clone().unwrap_or_default(),
            args: s.value.args.clone(),
            env: s.value.env.clone(),
            cwd: s.value.cwd.as_ref().map(|c| absolute(&dir.join(c))),
            required: s.value.required,
            tools: s.value.tools.clone(),
            timeout,
            sandbox: sandbox_settings(path, dir, s.value.sandbox.as_ref(), None, errors),
            url: s.value.url.clone(),
            headers: s.value.headers.clone(),
        });
    }
    out
}

/// `sandbox:` and `limits:`, with `write` paths made absolute and the
/// capabilities kept checked (into `errors`, in `path`).
pub(super) fn sandbox_settings(
    path: &Path,
    dir: &Path,
    sandbox: Option<&Spanned<SandboxFile>>,
    limits: Option<&LimitsFile>,
    errors: &mut Vec<ConfigError>,
) -> SandboxSettings {
    // Inside `sandbox:` (an untagged choice) the YAML's places are lost:
    // errors are placed at the value itself.
    let place = sandbox.map(|s| s.referenced);
    let sandbox = sandbox.map(|s| &s.value);
    let mut s = SandboxSettings::default();
    let mode = |m: SandboxModeFile| match m {
        SandboxModeFile::BestEffort => SandboxMode::BestEffort,
        SandboxModeFile::Required => SandboxMode::Required,
        SandboxModeFile::Off => SandboxMode::Off,
    };
    match sandbox {
        None => {}
        Some(SandboxFile::Mode(m)) => s.mode = mode(*m),
        Some(SandboxFile::Switch(on)) => {
            s.mode = if *on {
                SandboxMode::BestEffort
            } else {
                SandboxMode::Off
            }
        }
        Some(SandboxFile::Full(f)) => {
            if let Some(m) = f.mode {
                s.mode = mode(m);
            }
            s.network = f.network.unwrap_or(true);
            s.private_tmp = f.private_tmp.unwrap_or(true);
            let home = std::env::var_os("HOME").map(PathBuf::from);
            let paths = |list: &[String]| -> Vec<PathBuf> {
                list.iter()
                    .map(|w| match (w.strip_prefix("~/"), &home) {
                        (Some(rest), Some(h)) => h.join(rest),
                        _ => absolute(&dir.join(w)),
                    })
                    .collect()
            };
            s.write = paths(&f.write);
            s.readable = paths(&f.readable);
            s.unreadable_paths = paths(&f.unreadable);
            let place = place.map_or((0, 0), |l| (l.line(), l.column()));
            s.keep_capabilities = kept_capabilities(path, place, &f.capabilities, errors);
        }
    }
    if let Some(l) = limits {
        s.cpu_seconds = l.cpu_seconds;
        s.memory_bytes = l.memory_mb.map(|m| m.saturating_mul(1024 * 1024));
        s.processes = l.processes;
    }
    s
}

/// `sandbox.capabilities`, checked: each a known capability the walls do
/// not need dropped, with a reason.
fn kept_capabilities(
    path: &Path,
    (line, column): (u64, u64),
    caps: &[crate::task::sandbox_file::KeptCapability],
    errors: &mut Vec<ConfigError>,
) -> Vec<(u32, String)> {
    use crate::contain::caps;
    let mut out = Vec::new();
    for c in caps {
        let name = c.name.as_str();
        let at = |why: String| {
            ConfigError::new(path, line, column, format!("sandbox.capabilities: {why}"))
        };
        let Some(n) = caps::number(name) else {
            errors.push(at(match caps::closest(name) {
                Some(near) => format!("unknown capability `{name}` (did you mean `{near}`?)"),
                None => format!("unknown capability `{name}` (see capabilities(7))"),
            }));
            continue;
        };
        if let Some(why) = caps::not_kept(n) {
            errors.push(at(format!("`{name}` cannot be kept: {why}")));
            continue;
        }
        if c.reason.trim().is_empty() {
            errors.push(at(format!("`{name}` needs a reason")));
            continue;
        }
        out.push((n, c.reason.trim().to_string()));
    }
    out
}

fn absolute(p: &Path) -> PathBuf {
    let p = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    };
    crate::workspace::normalize_lexically(&p)
}

/// `model_options:`, checked.
pub(super) fn model_options(
    path: &Path,
    file: Option<&ModelOptionsFile>,
    errors: &mut Vec<ConfigError>,
) -> ModelOptions {
    let Some(f) = file else {
        return ModelOptions::default();
    };
    let mut dur = |v: &Option<Spanned<DurationText>>, field: &str| {
        v.as_ref().map(|_| {
            duration_field(
                path,
                v,
                &format!("model_options.{field}"),
                Duration::ZERO,
                errors,
            )
        })
    };
    let request_timeout = dur(&f.request_timeout, "request_timeout");
    let idle_timeout = dur(&f.idle_timeout, "idle_timeout");
    if let Some(u) = &f.base_url
        && !(u.value.starts_with("http://") || u.value.starts_with("https://"))
    {
        errors.push(ConfigError::at(
            path,
            &u.referenced,
            format!(
                "model_options.base_url: `{}` must start with http:// or https://",
                u.value
            ),
        ));
    }
    if let Some(w) = &f.context_window
        && w.value < 1024
    {
        errors.push(ConfigError::at(
            path,
            &w.referenced,
            "model_options.context_window: must be at least 1024 tokens",
        ));
    }
    if let Some(c) = &f.compact_at
        && !(c.value > 0.1 && c.value < 1.0)
    {
        errors.push(ConfigError::at(
            path,
            &c.referenced,
            format!(
                "model_options.compact_at: {} is not a share of the window between 0.1 and 1 (0.8 compacts at 80%)",
                c.value
            ),
        ));
    }
    if let Some(p) = &f.pricing {
        let prices = [Some(p.input), p.cached_input, Some(p.output)];
        if prices
            .into_iter()
            .flatten()
            .any(|x| !(x >= 0.0 && x.is_finite()))
        {
            errors.push(ConfigError::new(
                path,
                0,
                0,
                "model_options.pricing: prices must be non-negative numbers (USD per million tokens)",
            ));
        }
    }
    if let Some(c) = &f.tool_choice
        && c.value.trim().is_empty()
    {
        errors.push(ConfigError::at(
            path,
            &c.referenced,
            "model_options.tool_choice: auto, required, none or a tool's name",
        ));
    }
    let content_with_tool_calls = match &f.content_with_tool_calls {
        None => None,
        Some(c) if c.value.is_empty() => Some(ToolCallContent::Empty),
        Some(c) => {
            errors.push(ConfigError::at(
                path,
                &c.referenced,
                format!(
                    "model_options.content_with_tool_calls: `{}` is neither null (the default) nor \"\" (an empty string)",
                    c.value
                ),
            ));
            None
        }
    };
    let service_tier = f.service_tier.as_ref().and_then(|t| {
        let tier = ServiceTier::parse(&t.value);
        if tier.is_none() {
            errors.push(ConfigError::at(
                path,
                &t.referenced,
                format!(
                    "model_options.service_tier: `{}` is none of OpenAI's ({}) or Anthropic's ({})",
                    t.value,
                    tier::names(Vendor::OpenAi.service_tiers()),
                    tier::names(Vendor::Anthropic.service_tiers())
                ),
            ));
        }
        tier
    });
    let api = f.api.as_ref().map_or(OpenAiApi::Chat, |a| {
        OpenAiApi::parse(&a.value).unwrap_or_else(|| {
            errors.push(ConfigError::at(
                path,
                &a.referenced,
                format!(
                    "model_options.api: `{}` is neither chat (Chat Completions, the default) nor responses (the Responses API)",
                    a.value
                ),
            ));
            OpenAiApi::Chat
        })
    });
    ModelOptions {
        api,
        service_tier,
        content_with_tool_calls,
        tool_choice: f.tool_choice.as_ref().map_or_else(Default::default, |c| {
            crate::provider::ToolChoice::parse(c.value.trim())
        }),
        context_window: f.context_window.as_ref().map(|w| w.value),
        compact_at: f.compact_at.as_ref().map(|c| c.value),
        pricing: f.pricing,
        temperature: f.temperature,
        max_tokens: f.max_tokens,
        base_url: f.base_url.as_ref().map(|u| u.value.clone()),
        stream: f.stream,
        request_timeout,
        idle_timeout,
        max_retries: f.max_retries,
    }
}
