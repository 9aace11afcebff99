//! The registry: every tool a task can call, by name.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::tool::{DynTool, ToolKind};
use crate::provider::ToolSpec;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RegistryError {
    #[error("a tool named `{0}` is already registered")]
    Duplicate(String),
    #[error("unknown tool `{name}`; known tools: {known}")]
    Unknown { name: String, known: String },
}

/// Tools by name, in registration order for declarations.
#[derive(Clone, Default)]
pub struct Registry {
    order: Vec<String>,
    tools: BTreeMap<String, Arc<dyn DynTool>>,
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    /// The registry of the built-in tools.
    pub fn builtin() -> Self {
        // Made once a process: its tools keep their schemas once made.
        static BUILTIN: std::sync::LazyLock<Registry> = std::sync::LazyLock::new(|| {
            let mut r = Registry::new();
            for t in super::builtin::all() {
                r.register(t).expect("built-in tool names are unique");
            }
            r
        });
        BUILTIN.clone()
    }

    pub fn register(&mut self, tool: Arc<dyn DynTool>) -> Result<(), RegistryError> {
        let name = tool.name().to_string();
        if self.tools.contains_key(&name) {
            return Err(RegistryError::Duplicate(name));
        }
        self.order.push(name.clone());
        self.tools.insert(name, tool);
        Ok(())
    }

    pub fn get(&self, name: &str) -> Result<&Arc<dyn DynTool>, RegistryError> {
        self.tools.get(name).ok_or_else(|| RegistryError::Unknown {
            name: name.to_string(),
            known: self.order.join(", "),
        })
    }

    pub fn contains(&self, name: &str) -> bool {
        self.tools.contains_key(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.order.iter().map(String::as_str)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn DynTool>> {
        self.order.iter().map(|n| &self.tools[n])
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Keeps only the named tools (in registration order). A name that is
    /// not registered only ever narrows the set: it never widens it. Task
    /// loading reports unknown names as errors before this is called.
    pub fn retain_named(&mut self, names: &[String]) {
        self.order.retain(|n| names.contains(n));
        self.tools.retain(|n, _| names.contains(n));
    }

    /// Leaves out the named tools.
    pub fn drop_named(&mut self, names: &[&str]) {
        self.order.retain(|n| !names.contains(&n.as_str()));
        self.tools.retain(|n, _| !names.contains(&n.as_str()));
    }

    /// `plan` mode: read-only tools only.
    pub fn read_only(&self) -> Self {
        let mut r = Self::new();
        for t in self.iter().filter(|t| t.kind() == ToolKind::ReadOnly) {
            r.register(t.clone()).expect("names were unique");
        }
        r
    }

    /// What a model is told of each tool, in registration order.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.iter()
            .map(|t| ToolSpec {
                name: t.name().to_string(),
                description: t.description(),
                input_schema: t.input_schema(),
            })
            .collect()
    }
}
