//! The fields of a task file resolved one step at a time. Each step reads
//! what it needs, records its errors (located) and goes on with a
//! placeholder, so one `runner validate` shows every mistake of a file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::model::{OutputSchemaRef, PolicyRef, TaskFile};
use super::options::LoadOptions;
use super::params;
use super::resolved::TaskCheck;
use super::sections::duration_field;
use crate::engine::OutputSchema;
use crate::provider::{ModelOptions, ModelSpec, ToolChoice};
use runner_policy::{ConfigError, Policy, compile_policy, load_policy_file};
use serde_saphyr::{Location, Spanned};
use std::sync::Arc;

mod price;

const DEFAULT_CHECK_TIMEOUT: Duration = Duration::from_secs(300);

/// A task file being resolved: where it is, the command line's options,
/// and the errors so far.
pub(super) struct Resolve<'a> {
    path: &'a Path,
    /// The file's text, to locate fields whose values lose their place
    /// when parsed (an untagged choice of a path or a mapping).
    text: &'a str,
    /// The folder relative paths start from.
    pub(super) dir: &'a Path,
    opts: &'a LoadOptions,
    pub(super) errors: Vec<ConfigError>,
}

impl<'a> Resolve<'a> {
    pub(super) fn new(path: &'a Path, text: &'a str, opts: &'a LoadOptions) -> Self {
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        Self {
            path,
            text,
            dir,
            opts,
            errors: Vec::new(),
        }
    }

    /// An error at a top-level `key:` of the file (its value's place).
    fn error_at_key(&mut self, key: &str, message: impl Into<String>) {
        let prefix = format!("{key}:");
        let (line, column) = self
            .text
            .lines()
            .enumerate()
            .find(|(_, l)| l.starts_with(&prefix))
            .map_or((0, 0), |(i, l)| {
                let rest = &l[prefix.len()..];
                (
                    i + 1,
                    prefix.len() + 1 + rest.len() - rest.trim_start().len(),
                )
            });
        self.errors.push(ConfigError::new(
            self.path,
            line as u64,
            column as u64,
            message.into(),
        ));
    }

    fn error(&mut self, at: &Location, message: impl Into<String>) {
        self.errors
            .push(ConfigError::at(self.path, at, message.into()));
    }

    /// The errors of every step, or nothing.
    pub(super) fn finish(self) -> Result<(), Vec<ConfigError>> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(self.errors)
        }
    }

    /// `name:`, or the file's stem; it names the output folder.
    pub(super) fn name(&mut self, tf: &TaskFile) -> String {
        let Some(n) = &tf.name else {
            return self
                .path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
        };
        let v = n.value.trim().to_string();
        if v.is_empty() || v.contains(['/', '\\']) || v == "." || v == ".." {
            self.error(
                &n.referenced,
                "name: must be non-empty and contain no `/` (it names the output folder)",
            );
        }
        v
    }

    /// `parameters:` with their values: `--param`, else the default.
    pub(super) fn params(&mut self, tf: &TaskFile) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for (name, decl) in &tf.parameters {
            if name == params::FILES {
                self.error(
                    &decl.referenced,
                    "parameters: `files` is built in (the names given with --files)",
                );
                continue;
            }
            let given = self.opts.params.get(name).map(String::as_str);
            match given.or(decl.value.default_value()) {
                Some(v) => {
                    out.insert(name.clone(), v.to_string());
                }
                None if self.opts.params_optional => {
                    out.insert(name.clone(), format!("{{{{{name}}}}}"));
                }
                None => {
                    self.error(
                        &decl.referenced,
                        format!(
                            "parameters.{name}: no value (give --param {name}=VALUE or a default)"
                        ),
                    );
                    // Declared all the same: its `{{name}}` is no second error.
                    out.insert(name.clone(), format!("{{{{{name}}}}}"));
                }
            }
        }
        out
    }

    /// The prompt and the checks' commands with `{{NAME}}` and
    /// `{{files}}` filled in.
    pub(super) fn render_texts(
        &mut self,
        tf: &TaskFile,
        params: &BTreeMap<String, String>,
    ) -> (String, Vec<String>) {
        let mut values = params.clone();
        values.insert(params::FILES.to_string(), self.opts.files.join(" "));
        let prompt = self.render(&values, "prompt", &tf.prompt);
        if tf.prompt.value.trim().is_empty() {
            self.error(&tf.prompt.referenced, "prompt: must not be empty");
        }
        let runs = tf
            .checks
            .iter()
            .enumerate()
            .map(|(i, c)| self.render(&values, &format!("checks[{i}].run"), &c.run))
            .collect();
        (prompt, runs)
    }

    fn render(
        &mut self,
        values: &BTreeMap<String, String>,
        field: &str,
        text: &Spanned<String>,
    ) -> String {
        params::render(&text.value, values).unwrap_or_else(|e| {
            self.error(&text.referenced, format!("{field}: {e}"));
            text.value.clone()
        })
    }

    /// `model:` (or `--model`) and the models to fall back to (the rest
    /// of a `model:` list, then `fallback:`); `scripted` needs a `script:`
    /// and stands alone.
    pub(super) fn model(&mut self, tf: &TaskFile) -> (Option<ModelSpec>, Vec<ModelSpec>) {
        let written = tf.model.as_ref().map(|m| &m.0);
        let at = written.map_or(Location::UNKNOWN, |m| m.referenced);
        let chain: Vec<ModelSpec> = match &self.opts.model_override {
            Some(chain) => chain.clone(),
            None => {
                let mut names: Vec<(String, Location)> = match written {
                    Some(m) => m.value.iter().map(|n| (n.clone(), at)).collect(),
                    None => vec![("scripted".to_string(), at)],
                };
                if let Some(f) = &tf.fallback {
                    names.extend(f.value.iter().map(|n| (n.clone(), f.referenced)));
                }
                let mut chain = Vec::new();
                for (name, at) in names {
                    match ModelSpec::parse(&name) {
                        Ok(spec) => chain.push(spec),
                        Err(e) => self.error(&at, format!("model: {e}")),
                    }
                }
                if written.is_some_and(|m| m.value.is_empty()) {
                    self.error(&at, "model: an empty list names no model");
                }
                chain
            }
        };
        if chain.len() > 1 && chain.iter().any(ModelSpec::is_scripted) {
            self.error(
                &at,
                "model: `scripted` cannot be part of a fallback chain (its turns are the task's script)",
            );
        }
        let mut chain = chain.into_iter();
        let model = chain.next();
        if model.as_ref().is_some_and(ModelSpec::is_scripted)
            && tf.script.is_none()
            && tf.scripts.is_none()
        {
            // Point at `model:` when written, else at the top of the file.
            let (line, column) =
                written.map_or((1, 1), |m| (m.referenced.line(), m.referenced.column()));
            self.errors.push(ConfigError::new(
                self.path,
                line,
                column,
                "script: required when the model is `scripted` (the model's turns)",
            ));
        }
        (model, chain.collect())
    }

    /// `policy:`: the built-in default, a file beside the task, or inline;
    /// its `{{files}}` rules bound to `--files`.
    pub(super) fn policy(&mut self, tf: &TaskFile) -> Option<Policy> {
        let (policy, at) = match &tf.policy {
            None => return Some(Policy::builtin_default()),
            Some(PolicyRef::Path(p)) => {
                let file = plainly(self.dir.join(&p.value));
                if !file.is_file() {
                    let message = format!("policy: file {} not found", file.display());
                    self.error(&p.referenced, message);
                    return None;
                }
                (load_policy_file(&file), p.referenced)
            }
            Some(PolicyRef::Inline(pf)) => {
                let source = format!("{} (inline policy)", self.path.display());
                let at = pf.rules.first().map_or(Location::UNKNOWN, |r| r.referenced);
                (compile_policy(pf, self.path, source), at)
            }
        };
        match policy {
            Err(es) => {
                self.errors.extend(es);
                None
            }
            // A file name that makes no valid rule is an error at `policy:`.
            Ok(p) => match p.bind_files(&self.opts.files) {
                Ok(p) => Some(p),
                Err(e) => {
                    self.error(&at, format!("policy: {e}"));
                    None
                }
            },
        }
    }

    /// `workspace:` (relative to the task file), or the current folder.
    pub(super) fn workspace(&mut self, tf: &TaskFile) -> PathBuf {
        let Some(w) = &tf.workspace else {
            return std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        };
        let joined = self.dir.join(&w.value);
        if !joined.is_dir() {
            let lexical = crate::workspace::normalize_lexically(&joined);
            self.error(
                &w.referenced,
                format!("workspace: folder {} not found", lexical.display()),
            );
        }
        plainly(joined)
    }

    /// `tools:`: names the registry knows.
    pub(super) fn tools(&mut self, tf: &TaskFile) -> Option<Vec<String>> {
        let list = tf.tools.as_ref()?;
        let mut names = Vec::new();
        for t in list {
            match self.opts.registry.get(&t.value) {
                Ok(_) => names.push(t.value.clone()),
                Err(e) => self.error(&t.referenced, format!("tools: {e}")),
            }
        }
        Some(names)
    }

    /// `checks:` with their rendered commands (`runs`, from
    /// [`Self::render_texts`]).
    pub(super) fn checks(&mut self, tf: &TaskFile, runs: Vec<String>) -> Vec<TaskCheck> {
        let mut checks = Vec::new();
        for ((i, c), run) in tf.checks.iter().enumerate().zip(runs) {
            let field = format!("checks[{i}].timeout");
            let timeout = duration_field(
                self.path,
                &c.timeout,
                &field,
                DEFAULT_CHECK_TIMEOUT,
                &mut self.errors,
            );
            if c.run.value.trim().is_empty() {
                self.error(
                    &c.run.referenced,
                    format!("checks[{i}].run: must not be empty"),
                );
            }
            if let Some(sh) = &c.shell
                && sh.value.trim().is_empty()
            {
                self.error(
                    &sh.referenced,
                    format!(
                        "checks[{i}].shell: must name a shell (bash, sh, python, `perl {{0}}` ...)"
                    ),
                );
            }
            checks.push(TaskCheck {
                name: c
                    .name
                    .clone()
                    .unwrap_or_else(|| run.lines().next().unwrap_or("").to_string()),
                run,
                shell: c.shell.as_ref().map(|s| s.value.clone()),
                timeout,
            });
        }
        checks
    }

    /// `max_turns:` and `max_tokens_total:` are at least 1.
    pub(super) fn limits(&mut self, tf: &TaskFile) {
        if let Some(m) = &tf.max_turns
            && m.value == 0
        {
            self.error(&m.referenced, "max_turns: must be at least 1");
        }
        if let Some(m) = &tf.max_tokens_total
            && m.value == 0
        {
            self.error(
                &m.referenced,
                "max_tokens_total: must be at least 1 (leave it out for no limit)",
            );
        }
    }

    /// `output_schema:`: inline, or a `.json`/`.yaml` file beside the
    /// task; it must compile as a JSON Schema.
    pub(super) fn output_schema(&mut self, tf: &TaskFile) -> Option<Arc<OutputSchema>> {
        let schema = match tf.output_schema.as_ref()? {
            OutputSchemaRef::Inline(v) => v.clone(),
            OutputSchemaRef::Path(p) => {
                let file = self.dir.join(&p.value);
                let text = match std::fs::read_to_string(&file) {
                    Ok(t) => t,
                    Err(e) => {
                        let message = format!("output_schema: {}: {e}", file.display());
                        self.error_at_key("output_schema", message);
                        return None;
                    }
                };
                let parsed: Result<serde_json::Value, Box<dyn std::error::Error>> =
                    if p.value.ends_with(".yaml") || p.value.ends_with(".yml") {
                        serde_saphyr::from_str(&text).map_err(Into::into)
                    } else {
                        serde_json::from_str(&text).map_err(Into::into)
                    };
                match parsed {
                    Ok(v) => v,
                    Err(e) => {
                        let message = format!("output_schema: {}: {e}", file.display());
                        self.error_at_key("output_schema", message);
                        return None;
                    }
                }
            }
        };
        match OutputSchema::new(schema) {
            Ok(s) => Some(Arc::new(s)),
            Err(e) => {
                self.error_at_key(
                    "output_schema",
                    format!("output_schema: not a JSON Schema: {e}"),
                );
                None
            }
        }
    }

    /// `model_options.tool_choice`: a tool's name must be a tool the task
    /// has (an MCP tool's, `server__tool`, is known only once it starts).
    pub(super) fn tool_choice(&mut self, tf: &TaskFile, options: &ModelOptions) {
        let ToolChoice::Tool(name) = &options.tool_choice else {
            return;
        };
        let listed = tf
            .tools
            .as_ref()
            .is_none_or(|l| l.iter().any(|t| &t.value == name));
        if name.contains("__") || (self.opts.registry.contains(name) && listed) {
            return;
        }
        let at = tf
            .model_options
            .as_ref()
            .and_then(|m| m.tool_choice.as_ref())
            .map_or(Location::UNKNOWN, |c| c.referenced);
        self.error(
            &at,
            format!("model_options.tool_choice: `{name}` is not one of the task's tools (or auto, required, none)"),
        );
    }

    /// `hooks:`, compiled.
    pub(super) fn hooks(&mut self, tf: &TaskFile) -> runner_policy::Hooks {
        let Some(h) = &tf.hooks else {
            return Default::default();
        };
        let source = self.path.display().to_string();
        runner_policy::compile_hooks(h, self.path, &source).unwrap_or_else(|es| {
            self.errors.extend(es);
            Default::default()
        })
    }

    /// `script:`: a call gives `args` or `raw_args`, not both.
    pub(super) fn script(&mut self, tf: &TaskFile) {
        if let (Some(_), Some(_)) = (&tf.script, &tf.scripts) {
            self.errors.push(ConfigError::new(
                self.path,
                1,
                1,
                "scripts: give `script:` (one) or `scripts:` (one per attempt), not both",
            ));
        }
        let scripts = tf.script.iter().chain(tf.scripts.iter().flatten());
        for (i, turn) in scripts.flatten().enumerate() {
            for (j, call) in turn.tool_calls.iter().enumerate() {
                if call.args.is_some() && call.raw_args.is_some() {
                    self.error(
                        &call.name.referenced,
                        format!("script[{i}].tool_calls[{j}]: give `args` or `raw_args`, not both"),
                    );
                }
            }
        }
    }
}

/// `path` as printed and recorded: `tasks/../examples/shop` is
/// `examples/shop`, and `tasks/..` is `.`, where that names the same file
/// (not where a symlink on the way leads elsewhere, nor where it is
/// missing).
fn plainly(path: PathBuf) -> PathBuf {
    let mut lexical = crate::workspace::normalize_lexically(&path);
    if lexical.as_os_str().is_empty() {
        lexical = PathBuf::from(".");
    }
    let same = lexical
        .canonicalize()
        .ok()
        .is_some_and(|l| path.canonicalize().ok() == Some(l));
    if same { lexical } else { path }
}
