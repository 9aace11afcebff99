//! Loading and validating task files.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::duration::parse_duration;
use super::model::{DurationText, Mode, ModelOptionsFile, PolicyRef, TaskFile};
use super::model::{LimitsFile, McpServerFile, SandboxFile, SandboxModeFile};
use super::params;
use crate::contain::{EnvSettings, SandboxMode, SandboxSettings};
use crate::mcp::McpServerSpec;
use crate::provider::ModelOptions;
use crate::provider::{ModelSpec, ScriptTurn};
use crate::tools::Registry;
use runner_policy::ConfigError;
use runner_policy::{Policy, compile_policy, load_policy_file, parse_policy_yaml};
use serde_saphyr::Spanned;

const DEFAULT_MAX_TURNS: u32 = 20;
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
const DEFAULT_CHECK_TIMEOUT: Duration = Duration::from_secs(300);

/// What loading needs from the command line.
#[derive(Clone, Default)]
pub struct LoadOptions {
    /// `--model`: replaces every task's model.
    pub model_override: Option<ModelSpec>,
    /// The tools a task may name (built-in ones).
    pub registry: Registry,
    /// `--param NAME=VALUE`, for every task that declares NAME.
    pub params: BTreeMap<String, String>,
    /// `--files`: the value of `{{files}}` and of `Edit({{files}})` rules.
    pub files: Vec<String>,
    /// `runner validate`: a parameter without a value is not an error (its
    /// placeholder is kept as written).
    pub params_optional: bool,
}

impl LoadOptions {
    /// For looking at task files without running them (`runner validate`,
    /// `runner tools --task`): built-in tools, no `--param`, and a parameter
    /// without a value is not an error.
    pub fn lenient() -> Self {
        LoadOptions {
            model_override: None,
            registry: Registry::builtin(),
            params: Default::default(),
            files: Default::default(),
            params_optional: true,
        }
    }
}

/// A check, resolved.
#[derive(Debug, Clone)]
pub struct TaskCheck {
    pub name: String,
    pub run: String,
    /// `shell:` as written (`sh`, `python`, `perl {0}`); none runs bash as
    /// CI does.
    pub shell: Option<String>,
    pub timeout: Duration,
}

/// A task ready to run: defaults applied, paths resolved, policy compiled.
#[derive(Debug, Clone)]
pub struct Task {
    pub name: String,
    /// Where `name:` is written (line, column); (1, 1) when defaulted.
    pub name_at: (u64, u64),
    pub file: PathBuf,
    pub prompt: String,
    pub model: ModelSpec,
    /// The task's own policy layer (the built-in default when it names none).
    pub policy: Policy,
    pub workspace: PathBuf,
    pub mode: Mode,
    pub tools: Option<Vec<String>>,
    pub max_turns: u32,
    pub timeout: Duration,
    pub checks: Vec<TaskCheck>,
    pub retries: u32,
    pub fail_on_denial: bool,
    /// Shared: every attempt plays it from the start.
    pub script: std::sync::Arc<[ScriptTurn]>,
    /// Declared parameters with their values (`files` not included).
    pub params: BTreeMap<String, String>,
    pub model_options: ModelOptions,
    pub env: EnvSettings,
    pub sandbox: SandboxSettings,
    pub mcp_servers: Vec<McpServerSpec>,
    /// 0: no limit.
    pub max_tokens_total: u64,
}

fn read(path: &Path) -> Result<String, Vec<ConfigError>> {
    std::fs::read_to_string(path).map_err(|e| {
        vec![ConfigError::new(
            path,
            0,
            0,
            format!("cannot read file: {e}"),
        )]
    })
}

/// An optional duration field: its value, or `default`; a bad value is an
/// error at its location.
fn duration_field(
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
fn mcp_servers(
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
            sandbox: sandbox_settings(dir, s.value.sandbox.as_ref(), None),
            url: s.value.url.clone(),
            headers: s.value.headers.clone(),
        });
    }
    out
}

/// `sandbox:` and `limits:`, with `write` paths made absolute.
fn sandbox_settings(
    dir: &Path,
    sandbox: Option<&SandboxFile>,
    limits: Option<&LimitsFile>,
) -> SandboxSettings {
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
            let home = std::env::var_os("HOME").map(PathBuf::from);
            s.write = f
                .write
                .iter()
                .map(|w| match (w.strip_prefix("~/"), &home) {
                    (Some(rest), Some(h)) => h.join(rest),
                    _ => absolute(&dir.join(w)),
                })
                .collect();
        }
    }
    if let Some(l) = limits {
        s.cpu_seconds = l.cpu_seconds;
        s.memory_bytes = l.memory_mb.map(|m| m.saturating_mul(1024 * 1024));
    }
    s
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
fn model_options(
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
    ModelOptions {
        temperature: f.temperature,
        max_tokens: f.max_tokens,
        base_url: f.base_url.as_ref().map(|u| u.value.clone()),
        stream: f.stream,
        request_timeout,
        idle_timeout,
        max_retries: f.max_retries,
    }
}

/// Parses and validates one task file.
pub fn load_task(path: &Path, opts: &LoadOptions) -> Result<Task, Vec<ConfigError>> {
    let text = read(path)?;
    let tf: TaskFile = serde_saphyr::from_str(&text)
        .map_err(|e| vec![ConfigError::from_yaml_in(path, &text, &e)])?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut errors = Vec::new();

    let name = match &tf.name {
        Some(n) => {
            let v = n.value.trim().to_string();
            if v.is_empty() || v.contains(['/', '\\']) || v == "." || v == ".." {
                errors.push(ConfigError::at(
                    path,
                    &n.referenced,
                    "name: must be non-empty and contain no `/` (it names the output folder)",
                ));
            }
            v
        }
        None => path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    let mut params = BTreeMap::new();
    for (name, decl) in &tf.parameters {
        if name == params::FILES {
            errors.push(ConfigError::at(
                path,
                &decl.referenced,
                "parameters: `files` is built in (the names given with --files)",
            ));
            continue;
        }
        match opts
            .params
            .get(name)
            .map(String::as_str)
            .or(decl.value.default_value())
        {
            Some(v) => {
                params.insert(name.clone(), v.to_string());
            }
            None if opts.params_optional => {
                params.insert(name.clone(), format!("{{{{{name}}}}}"));
            }
            None => errors.push(ConfigError::at(
                path,
                &decl.referenced,
                format!("parameters.{name}: no value (give --param {name}=VALUE or a default)"),
            )),
        }
    }
    let mut values = params.clone();
    values.insert(params::FILES.to_string(), opts.files.join(" "));
    let mut render = |field: &str, text: &Spanned<String>| -> String {
        params::render(&text.value, &values).unwrap_or_else(|e| {
            errors.push(ConfigError::at(
                path,
                &text.referenced,
                format!("{field}: {e}"),
            ));
            text.value.clone()
        })
    };
    let prompt = render("prompt", &tf.prompt);
    let check_runs: Vec<String> = tf
        .checks
        .iter()
        .enumerate()
        .map(|(i, c)| render(&format!("checks[{i}].run"), &c.run))
        .collect();
    if tf.prompt.value.trim().is_empty() {
        errors.push(ConfigError::at(
            path,
            &tf.prompt.referenced,
            "prompt: must not be empty",
        ));
    }
    let model = match (&opts.model_override, &tf.model) {
        (Some(m), _) => Some(m.clone()),
        (None, Some(m)) => match ModelSpec::parse(&m.value) {
            Ok(spec) => Some(spec),
            Err(e) => {
                errors.push(ConfigError::at(path, &m.referenced, format!("model: {e}")));
                None
            }
        },
        (None, None) => Some(ModelSpec::parse("scripted").unwrap()),
    };
    if let Some(m) = &model
        && m.is_scripted()
        && tf.script.is_none()
    {
        // Point at `model:` when written, else at the top of the file.
        let (line, column) = tf
            .model
            .as_ref()
            .map_or((1, 1), |m| (m.referenced.line(), m.referenced.column()));
        errors.push(ConfigError::new(
            path,
            line,
            column,
            "script: required when the model is `scripted` (the model's turns)",
        ));
    }
    let policy = match &tf.policy {
        None => Some(Policy::builtin_default()),
        Some(PolicyRef::Path(p)) => {
            let file = dir.join(&p.value);
            if !file.is_file() {
                errors.push(ConfigError::at(
                    path,
                    &p.referenced,
                    format!("policy: file {} not found", file.display()),
                ));
                None
            } else {
                match load_policy_file(&file) {
                    Ok(pol) => bind_files(pol, path, &p.referenced, &opts.files, &mut errors),
                    Err(es) => {
                        errors.extend(es);
                        None
                    }
                }
            }
        }
        Some(PolicyRef::Inline(pf)) => {
            match compile_policy(pf, path, format!("{} (inline policy)", path.display())) {
                Ok(p) => {
                    let at = pf
                        .rules
                        .first()
                        .map_or(serde_saphyr::Location::UNKNOWN, |r| r.referenced);
                    bind_files(p, path, &at, &opts.files, &mut errors)
                }
                Err(es) => {
                    errors.extend(es);
                    None
                }
            }
        }
    };
    let workspace = match &tf.workspace {
        Some(w) => {
            let p = dir.join(&w.value);
            if !p.is_dir() {
                errors.push(ConfigError::at(
                    path,
                    &w.referenced,
                    format!("workspace: folder {} not found", p.display()),
                ));
            }
            p
        }
        None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
    };
    let tools = tf.tools.as_ref().map(|list| {
        list.iter()
            .filter_map(|t| match opts.registry.get(&t.value) {
                Ok(_) => Some(t.value.clone()),
                Err(e) => {
                    errors.push(ConfigError::at(path, &t.referenced, format!("tools: {e}")));
                    None
                }
            })
            .collect::<Vec<_>>()
    });
    let timeout = duration_field(path, &tf.timeout, "timeout", DEFAULT_TIMEOUT, &mut errors);
    if let Some(m) = &tf.max_turns
        && m.value == 0
    {
        errors.push(ConfigError::at(
            path,
            &m.referenced,
            "max_turns: must be at least 1",
        ));
    }
    let mut checks = Vec::new();
    for (i, c) in tf.checks.iter().enumerate() {
        let field = format!("checks[{i}].timeout");
        let timeout = duration_field(path, &c.timeout, &field, DEFAULT_CHECK_TIMEOUT, &mut errors);
        if c.run.value.trim().is_empty() {
            errors.push(ConfigError::at(
                path,
                &c.run.referenced,
                format!("checks[{i}].run: must not be empty"),
            ));
        }
        if let Some(sh) = &c.shell
            && sh.value.trim().is_empty()
        {
            errors.push(ConfigError::at(
                path,
                &sh.referenced,
                format!(
                    "checks[{i}].shell: must name a shell (bash, sh, python, `perl {{0}}` ...)"
                ),
            ));
        }
        checks.push(super::TaskCheck {
            name: c
                .name
                .clone()
                .unwrap_or_else(|| check_runs[i].lines().next().unwrap_or("").to_string()),
            run: check_runs[i].clone(),
            shell: c.shell.as_ref().map(|s| s.value.clone()),
            timeout,
        });
    }
    let model_options = model_options(path, tf.model_options.as_ref(), &mut errors);
    let sandbox = sandbox_settings(dir, tf.sandbox.as_ref(), tf.limits.as_ref());
    let mcp_servers = mcp_servers(path, dir, &tf.mcp_servers, &mut errors);
    let env = tf
        .env
        .as_ref()
        .map_or_else(EnvSettings::default, |e| EnvSettings {
            pass: e.pass.clone(),
            set: e.set.clone(),
        });
    if let Some(m) = &tf.max_tokens_total
        && m.value == 0
    {
        errors.push(ConfigError::at(
            path,
            &m.referenced,
            "max_tokens_total: must be at least 1 (leave it out for no limit)",
        ));
    }
    if let Some(script) = &tf.script {
        for (i, turn) in script.iter().enumerate() {
            for (j, call) in turn.tool_calls.iter().enumerate() {
                if call.args.is_some() && call.raw_args.is_some() {
                    errors.push(ConfigError::at(
                        path,
                        &call.name.referenced,
                        format!("script[{i}].tool_calls[{j}]: give `args` or `raw_args`, not both"),
                    ));
                }
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let name_at = tf
        .name
        .as_ref()
        .map_or((1, 1), |n| (n.referenced.line(), n.referenced.column()));
    Ok(Task {
        name,
        name_at,
        file: path.to_path_buf(),
        prompt,
        model: model.expect("checked"),
        policy: policy.expect("checked"),
        workspace,
        mode: tf.mode,
        tools,
        max_turns: tf.max_turns.map_or(DEFAULT_MAX_TURNS, |m| m.value),
        timeout,
        checks,
        retries: tf.retries,
        fail_on_denial: tf.fail_on_denial,
        model_options,
        env,
        sandbox,
        mcp_servers,
        max_tokens_total: tf.max_tokens_total.map_or(0, |m| m.value),
        script: tf.script.unwrap_or_default().into(),
        params,
    })
}

/// Adds the `{{files}}` rules of a policy; a file name that makes no valid
/// rule is an error at the task's `policy:`.
fn bind_files(
    policy: Policy,
    path: &Path,
    at: &serde_saphyr::Location,
    files: &[String],
    errors: &mut Vec<ConfigError>,
) -> Option<Policy> {
    match policy.bind_files(files) {
        Ok(p) => Some(p),
        Err(e) => {
            errors.push(ConfigError::at(path, at, format!("policy: {e}")));
            None
        }
    }
}

/// Loads every task, collecting all errors; names must be unique.
pub fn load_tasks(paths: &[PathBuf], opts: &LoadOptions) -> Result<Vec<Task>, Vec<ConfigError>> {
    let mut tasks = Vec::new();
    let mut errors = Vec::new();
    let mut seen: HashMap<String, PathBuf> = HashMap::new();
    for p in paths {
        match load_task(p, opts) {
            Ok(t) => {
                if let Some(first) = seen.get(&t.name) {
                    errors.push(ConfigError::new(
                        p,
                        t.name_at.0,
                        t.name_at.1,
                        format!(
                            "name: duplicate task name `{}` (also used by {})",
                            t.name,
                            first.display()
                        ),
                    ));
                } else {
                    seen.insert(t.name.clone(), p.clone());
                    tasks.push(t);
                }
            }
            Err(es) => errors.extend(es),
        }
    }
    if errors.is_empty() {
        Ok(tasks)
    } else {
        Err(errors)
    }
}

/// What kind of file `validate` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Task,
    Policy,
}

/// Validates a task or policy file (told apart by their keys).
pub fn validate_file(path: &Path, opts: &LoadOptions) -> Result<FileKind, Vec<ConfigError>> {
    let text = read(path)?;
    let v: serde_json::Value = serde_saphyr::from_str(&text)
        .map_err(|e| vec![ConfigError::from_yaml_in(path, &text, &e)])?;
    let is_task =
        v.get("prompt").is_some() || v.get("script").is_some() || v.get("checks").is_some();
    let is_policy = ["rules", "default", "risk", "tests"]
        .iter()
        .any(|k| v.get(k).is_some());
    if is_task {
        load_task(path, opts).map(|_| FileKind::Task)
    } else if is_policy {
        parse_policy_yaml(&text, path).map(|_| FileKind::Policy)
    } else {
        Err(vec![ConfigError::new(
            path,
            1,
            1,
            "neither a task file (it has no `prompt:`) nor a policy file (it has no `rules:` or `default:`)",
        )])
    }
}
