//! Permission signatures: the abstract form of a tool call that rules match.
//!
//! A call is never matched on its raw JSON. Each tool turns its arguments into
//! one or more `Family(specifier)` signatures: `Read(src/a.rs)`,
//! `Edit(.github/ci.yml)`, `Bash(git diff --stat)`, `Memory`, `Mcp(fs/read)`.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The families of signatures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum Family {
    /// A file or folder read, workspace-relative (absolute when outside).
    Read,
    /// A file written, created or deleted.
    Edit,
    /// One simple command of a shell script, its words joined.
    Bash,
    /// A fact saved to the agent's memory.
    Memory,
    /// A tool of an MCP server: `server/tool`.
    Mcp,
    /// A tool with no family of its own (test or plugin tools): `Tool(name)`.
    Tool,
    /// A web page fetched by the runner: `Fetch(host[:port]/path)`.
    Fetch,
    /// A child agent started by profile name: `Agent(reviewer)`.
    Agent,
}

impl Family {
    /// The family of a rule's name (`Read`, `Bash` ...).
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "Read" => Family::Read,
            "Edit" => Family::Edit,
            "Bash" => Family::Bash,
            "Memory" => Family::Memory,
            "Mcp" => Family::Mcp,
            "Tool" => Family::Tool,
            "Fetch" => Family::Fetch,
            "Agent" => Family::Agent,
            _ => return None,
        })
    }

    /// The family's name as rules spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Read => "Read",
            Family::Edit => "Edit",
            Family::Bash => "Bash",
            Family::Memory => "Memory",
            Family::Mcp => "Mcp",
            Family::Tool => "Tool",
            Family::Fetch => "Fetch",
            Family::Agent => "Agent",
        }
    }
}

/// One signature of a tool call.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Signature {
    /// What kind of access.
    pub family: Family,
    /// What is accessed: a path, a command, a tool; none for `Memory`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub specifier: Option<String>,
    /// True when the call reaches everything beneath the path, not just the
    /// path (`grep -r x src`, `rm -rf build`, `tar -x -C out`): a deny rule
    /// that could match any path beneath it denies the call, and an allow
    /// rule must cover the whole folder. Shown as `Read(src/**)`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tree: bool,
    /// Set when the call could not be analysed (a shell syntax error, a
    /// command word only known at run time ...): only a rule whose pattern is
    /// exactly this text allows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opaque: Option<String>,
    /// Set on the opaque signature of a login or interactive shell (`bash
    /// -lc CMD`): what it adds to `CMD` is the startup files of the
    /// machine and user, which commands cannot write when the run confines
    /// them. So it is satisfied by confinement, and otherwise decided as
    /// an opaque command.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unless_confined: bool,
    /// Set on another reading of a command than its words as written
    /// (`docker image push` for `docker push`, `npm publish` for `npm
    /// pub`, `git push` for `git send-pack`): a deny rule matching it
    /// denies the call, but allow rules need not cover it (the words as
    /// written are what they allow).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deny_only: bool,
    /// Set on a read of the content git's history holds beneath the path
    /// (`git log -p`, `git show REV`, `git archive REV`): a tree read
    /// decided by its folder alone where the copy's git view holds no
    /// content the policy denies reading ([`crate::Backstops::history`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub history: bool,
    /// Set on an opaque signature whose script starts a program its words
    /// show (`rg --pre X`, `sed s///e`, `awk 'system(...)'`, `git -c
    /// core.pager=X`): backstops relax only what the analysis cannot see
    /// into, so under them it is still decided by the layer's default, not
    /// by a rule allowing the program that starts it (issue 73).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub starts: bool,
}

impl Signature {
    /// `Family(specifier)`.
    pub fn new(family: Family, specifier: impl Into<String>) -> Self {
        Self {
            family,
            specifier: Some(specifier.into()),
            tree: false,
            opaque: None,
            unless_confined: false,
            deny_only: false,
            history: false,
            starts: false,
        }
    }

    /// `Family(path/**)`: the folder `path` and everything beneath it.
    pub fn tree(family: Family, path: impl Into<String>) -> Self {
        Self {
            tree: true,
            ..Self::new(family, path)
        }
    }

    /// `Read(path/**)` of what git's history holds beneath `path`.
    pub fn history(path: impl Into<String>) -> Self {
        Self {
            history: true,
            ..Self::tree(Family::Read, path)
        }
    }

    /// `Family` with no specifier.
    pub fn bare(family: Family) -> Self {
        Self {
            family,
            specifier: None,
            tree: false,
            opaque: None,
            unless_confined: false,
            deny_only: false,
            history: false,
            starts: false,
        }
    }

    /// `Fetch(host[:port]/path)` for a URL's parts: the host as
    /// [`crate::host::normalize_host`] gives it (IPv6 in brackets), the
    /// port unless it is the scheme's own (80, 443), the path decoded and
    /// without its leading `/` or query.
    pub fn fetch(host: &str, port: Option<u16>, path: &str) -> Self {
        let host = crate::host::normalize_host(host);
        let host = if host.contains(':') {
            format!("[{host}]")
        } else {
            host
        };
        let port = port.map(|p| format!(":{p}")).unwrap_or_default();
        Self::new(
            Family::Fetch,
            format!("{host}{port}/{}", path.trim_start_matches('/')),
        )
    }

    /// A signature that only an exact rule can allow, with the reason why.
    pub fn opaque(family: Family, text: impl Into<String>, why: impl Into<String>) -> Self {
        Self {
            family,
            specifier: Some(text.into()),
            tree: false,
            opaque: Some(why.into()),
            unless_confined: false,
            deny_only: false,
            history: false,
            starts: false,
        }
    }
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.specifier {
            Some(s) if self.tree && s == "." => write!(f, "{}(**)", self.family.as_str()),
            Some(s) if self.tree => {
                write!(
                    f,
                    "{}({}/**)",
                    self.family.as_str(),
                    s.trim_end_matches('/')
                )
            }
            Some(s) => write!(f, "{}({})", self.family.as_str(), s),
            None => f.write_str(self.family.as_str()),
        }
    }
}
