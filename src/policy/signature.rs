//! Permission signatures: the abstract form of a tool call that rules match.
//!
//! A call is never matched on its raw JSON. Each tool turns its arguments into
//! one or more `Family(specifier)` signatures (DESIGN §4): `Read(src/a.rs)`,
//! `Edit(.github/ci.yml)`, `Bash(git diff --stat)`, `Memory`, `Mcp(fs/read)`.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The families of signatures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum Family {
    Read,
    Edit,
    Bash,
    Memory,
    Mcp,
    /// A tool with no family of its own (test or plugin tools): `Tool(name)`.
    Tool,
}

impl Family {
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "Read" => Family::Read,
            "Edit" => Family::Edit,
            "Bash" => Family::Bash,
            "Memory" => Family::Memory,
            "Mcp" => Family::Mcp,
            "Tool" => Family::Tool,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Family::Read => "Read",
            Family::Edit => "Edit",
            Family::Bash => "Bash",
            Family::Memory => "Memory",
            Family::Mcp => "Mcp",
            Family::Tool => "Tool",
        }
    }

    pub const ALL: [&'static str; 6] = ["Read", "Edit", "Bash", "Memory", "Mcp", "Tool"];
}

/// One signature of a tool call.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Signature {
    pub family: Family,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub specifier: Option<String>,
    /// Set when the call could not be analysed (a shell syntax error, a
    /// command word only known at run time ...): only a rule whose pattern is
    /// exactly this text allows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opaque: Option<String>,
}

impl Signature {
    pub fn new(family: Family, specifier: impl Into<String>) -> Self {
        Self {
            family,
            specifier: Some(specifier.into()),
            opaque: None,
        }
    }

    pub fn bare(family: Family) -> Self {
        Self {
            family,
            specifier: None,
            opaque: None,
        }
    }

    /// A signature that only an exact rule can allow, with the reason why.
    pub fn opaque(family: Family, text: impl Into<String>, why: impl Into<String>) -> Self {
        Self {
            family,
            specifier: Some(text.into()),
            opaque: Some(why.into()),
        }
    }
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.specifier {
            Some(s) => write!(f, "{}({})", self.family.as_str(), s),
            None => f.write_str(self.family.as_str()),
        }
    }
}
