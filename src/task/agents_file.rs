//! `agents:` and `agent_limits:` as written in a task file (or a shared
//! file of profiles); [`super::agents`] resolves them.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_saphyr::Spanned;

use super::duration::DurationText;
use crate::provider::ScriptTurn;
use runner_policy::PolicyFile;

/// Where a child works.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Isolation {
    /// In the parent's copy of the workspace (default).
    #[default]
    Shared,
    /// In a copy of its own; its changes come back to the parent as a
    /// merge (a conflict is the `task` call's result).
    Copy,
}

impl Isolation {
    pub fn as_str(self) -> &'static str {
        match self {
            Isolation::Shared => "shared",
            Isolation::Copy => "copy",
        }
    }
}

/// One profile as written.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentProfileFile {
    /// What the profile is for: shown to the model in the `task` tool.
    #[serde(default)]
    pub description: Option<String>,
    /// Instructions added to the child's system prompt.
    #[serde(default)]
    pub prompt: Option<String>,
    /// `PROVIDER:MODEL` or `scripted` (default: the task's model).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub model: Option<Spanned<String>>,
    /// The child's turns, for `model: scripted`.
    #[serde(default)]
    pub script: Option<Vec<ScriptTurn>>,
    /// Its tools, a subset of the task's (default: the task's, without
    /// `task` unless `agents:` names profiles it may start).
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>")]
    pub tools: Option<Vec<Spanned<String>>>,
    /// One more policy layer on top of the task's: it can only narrow.
    #[serde(default)]
    pub policy: Option<PolicyFile>,
    /// Its turns (default: an equal share of what the task has left).
    #[serde(default)]
    #[schemars(with = "Option<u32>")]
    pub max_turns: Option<Spanned<u32>>,
    /// Its time (default and most: what the task has left).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub timeout: Option<Spanned<DurationText>>,
    /// Its cost in USD (default: an equal share of what the task has left).
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub max_cost: Option<Spanned<f64>>,
    /// Its answer must be JSON valid against this JSON Schema.
    #[serde(default)]
    pub output_schema: Option<serde_json::Value>,
    /// `shared` (default) or `copy`.
    #[serde(default)]
    pub isolation: Isolation,
    /// The profiles this child may start in turn (default: none).
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub agents: Vec<Spanned<String>>,
}

/// `agents:` is a path (relative to the task file) of a YAML file of
/// profiles, or the profiles inline.
#[derive(Debug, Clone, JsonSchema)]
#[serde(untagged)]
pub enum AgentsRef {
    Path(#[schemars(with = "String")] Spanned<String>),
    Inline(
        #[schemars(with = "BTreeMap<String, AgentProfileFile>")]
        BTreeMap<String, Spanned<AgentProfileFile>>,
    ),
}

/// A string or a mapping, told apart by the visitor (an untagged enum
/// would lose the profile's own error and its place).
enum Any {
    Path(String),
    Inline(BTreeMap<String, Spanned<AgentProfileFile>>),
}

impl<'de> Deserialize<'de> for Any {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Any;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a file of profiles, or profiles by name")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Any, E> {
                Ok(Any::Path(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Any, A::Error> {
                BTreeMap::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(Any::Inline)
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for AgentsRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s: Spanned<Any> = Spanned::deserialize(d)?;
        Ok(match s.value {
            Any::Path(p) => AgentsRef::Path(Spanned::new(p, s.referenced, s.defined)),
            Any::Inline(m) => AgentsRef::Inline(m),
        })
    }
}

/// `agent_limits:`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentLimitsFile {
    /// Children running at once, across the tree (default 4).
    #[serde(default)]
    pub parallel: Option<usize>,
    /// How deep children may start children (default 2).
    #[serde(default)]
    pub depth: Option<u32>,
}
