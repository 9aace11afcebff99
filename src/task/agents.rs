//! `agents:`: the profiles of children a task's agent may start with the
//! `task` tool (issue 32), inline or from a shared file, and
//! `agent_limits:`.
//!
//! A profile can only narrow: its `policy:` is one more layer on top of
//! the parent's (every layer must allow), its `tools:` a subset of the
//! parent's, its limits a share of the parent's remaining budget.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_saphyr::Spanned;

pub use super::agents_file::{AgentLimitsFile, AgentProfileFile, AgentsRef, Isolation};
use super::sections::duration_field;
use crate::engine::OutputSchema;
use crate::provider::models::{self, Pricing};
use crate::provider::{ModelSpec, ScriptTurn};
use runner_policy::{ConfigError, Policy, compile_policy};

/// Children running at once (of the whole tree), by default.
pub const DEFAULT_PARALLEL: usize = 4;
/// How deep children may start children, by default: the task's agent is
/// depth 0, its children 1.
pub const DEFAULT_DEPTH: u32 = 2;

/// A profile, resolved.
#[derive(Debug, Clone)]
pub struct AgentProfile {
    pub name: String,
    pub description: String,
    pub prompt: String,
    /// None: the task's model.
    pub model: Option<ModelSpec>,
    pub pricing: Option<Pricing>,
    pub script: Arc<[ScriptTurn]>,
    pub tools: Option<Vec<String>>,
    pub policy: Option<Policy>,
    pub max_turns: Option<u32>,
    pub timeout: Option<Duration>,
    pub max_cost: Option<f64>,
    pub output_schema: Option<Arc<OutputSchema>>,
    pub isolation: Isolation,
    /// Profiles it may start.
    pub agents: Vec<String>,
}

/// A task's profiles and limits.
#[derive(Debug, Clone)]
pub struct Agents {
    pub profiles: BTreeMap<String, AgentProfile>,
    pub parallel: usize,
    pub depth: u32,
}

/// Resolves `agents:` and `agent_limits:`; errors are located in the file
/// that holds the profile. `registry` knows the tool names.
pub(super) fn resolve_agents(
    task_file: &Path,
    dir: &Path,
    written: Option<&AgentsRef>,
    limits: Option<&AgentLimitsFile>,
    registry: &crate::tools::Registry,
    errors: &mut Vec<ConfigError>,
) -> Option<Arc<Agents>> {
    let shared;
    let (file, map): (PathBuf, &BTreeMap<String, Spanned<AgentProfileFile>>) = match written? {
        AgentsRef::Inline(m) => (task_file.to_path_buf(), m),
        AgentsRef::Path(p) => {
            let file = dir.join(&p.value);
            let text = match std::fs::read_to_string(&file) {
                Ok(t) => t,
                Err(e) => {
                    errors.push(ConfigError::at(
                        task_file,
                        &p.referenced,
                        format!("agents: {}: {e}", file.display()),
                    ));
                    return None;
                }
            };
            match serde_saphyr::from_str::<BTreeMap<String, Spanned<AgentProfileFile>>>(&text) {
                Ok(m) => {
                    shared = m;
                    (file, &shared)
                }
                Err(e) => {
                    errors.push(ConfigError::from_yaml_in(&file, &text, &e));
                    return None;
                }
            }
        }
    };
    let mut profiles = BTreeMap::new();
    for (name, spanned) in map {
        let (profile, es) = resolve_profile(&file, name, spanned, registry);
        errors.extend(es);
        profiles.insert(name.clone(), profile);
    }
    // A profile may start only profiles that exist.
    for (name, spanned) in map {
        for a in &spanned.value.agents {
            if !profiles.contains_key(&a.value) {
                errors.push(ConfigError::at(
                    &file,
                    &a.referenced,
                    format!("agents.{name}.agents: no profile `{}`", a.value),
                ));
            }
        }
    }
    Some(Arc::new(Agents {
        profiles,
        parallel: limits
            .and_then(|l| l.parallel)
            .unwrap_or(DEFAULT_PARALLEL)
            .max(1),
        depth: limits.and_then(|l| l.depth).unwrap_or(DEFAULT_DEPTH),
    }))
}

fn resolve_profile(
    file: &Path,
    name: &str,
    spanned: &Spanned<AgentProfileFile>,
    registry: &crate::tools::Registry,
) -> (AgentProfile, Vec<ConfigError>) {
    let at = spanned.referenced;
    let p = &spanned.value;
    let mut es = Vec::new();
    let mut err = |at: &serde_saphyr::Location, m: String| {
        es.push(ConfigError::at(file, at, format!("agents.{name}.{m}")))
    };
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        err(&at, "a profile name is letters, digits, `_` and `-`".into());
    }
    let model = p
        .model
        .as_ref()
        .and_then(|m| match ModelSpec::parse(&m.value) {
            Ok(s) => Some(s),
            Err(e) => {
                err(&m.referenced, format!("model: {e}"));
                None
            }
        });
    if model.as_ref().is_some_and(ModelSpec::is_scripted) && p.script.is_none() {
        err(&at, "script: required when the model is `scripted`".into());
    }
    let pricing = model
        .as_ref()
        .filter(|m| !m.is_scripted())
        .and_then(|m| models::pricing(&m.model));
    if let Some(c) = &p.max_cost
        && model.as_ref().is_some_and(|m| !m.is_scripted())
        && pricing.is_none()
    {
        err(
            &c.referenced,
            "max_cost: the model's price is not known".into(),
        );
    }
    let tools = p.tools.as_ref().map(|list| {
        let mut names = Vec::new();
        for t in list {
            if t.value.contains("__") || registry.contains(&t.value) {
                names.push(t.value.clone());
            } else {
                err(&t.referenced, format!("tools: unknown tool `{}`", t.value));
            }
        }
        names
    });
    let output_schema = p
        .output_schema
        .clone()
        .and_then(|v| match OutputSchema::new(v) {
            Ok(s) => Some(Arc::new(s)),
            Err(e) => {
                err(&at, format!("output_schema: not a JSON Schema: {e}"));
                None
            }
        });
    let timeout = p.timeout.as_ref().map(|t| {
        duration_field(
            file,
            &Some(t.clone()),
            &format!("agents.{name}.timeout"),
            Duration::ZERO,
            &mut es,
        )
    });
    let policy = p.policy.as_ref().and_then(|pf| {
        let source = format!("{} (agents.{name}.policy)", file.display());
        compile_policy(pf, file, source)
            .map_err(|e| es.extend(e))
            .ok()
    });
    let profile = AgentProfile {
        name: name.to_string(),
        description: p.description.clone().unwrap_or_default(),
        prompt: p.prompt.clone().unwrap_or_default(),
        model,
        pricing,
        script: p.script.clone().unwrap_or_default().into(),
        tools,
        policy,
        max_turns: p.max_turns.as_ref().map(|m| m.value),
        timeout,
        max_cost: p.max_cost.as_ref().map(|m| m.value),
        output_schema,
        isolation: p.isolation,
        agents: p.agents.iter().map(|a| a.value.clone()).collect(),
    };
    (profile, es)
}
