//! The permission engine of `runner`: a pure library.
//!
//! Every tool call an agent makes is turned into one or more [`Signature`]s
//! (`Read(src/a.rs)`, `Edit(.github/ci.yml)`, `Bash(git diff --stat)`,
//! `Memory`, `Mcp(fs/read)`). A [`Policy`] (one YAML file, or a task's inline
//! policy) holds allow and deny rules over signatures; a [`PolicySet`] layers
//! several policies and decides each call: any deny rule that matches any
//! signature denies, otherwise every signature must be allowed by a rule, by
//! its tool's [`Risk`] being low, or by the layer's default. Every layer must
//! allow a call for it to run, so one layer can never loosen another.
//!
//! Shell commands are the hard part. [`shell::analyze`] parses a bash script
//! with a real bash grammar and finds every simple command it would run,
//! through compound commands, substitutions and wrappers (`env`, `timeout`,
//! `xargs`, `bash -c` ...); the [`programs`] models say which files each
//! well-known program reads and writes, so that `Read`/`Edit` deny rules hold
//! whichever program touches a path. Whatever cannot be known before running
//! makes the script *opaque*: only a rule naming its exact text allows it.
//! When unsure, deny.
//!
//! The crate does no I/O of its own but reading a policy file
//! ([`load_policy_file`]) and listing folders to expand a glob operand as
//! bash would. How paths are spelled in signatures (relative to the
//! workspace, symlinks followed) is given by the caller through
//! [`SignaturePaths`]; [`LexicalPaths`] spells them without touching the disk.

#![warn(missing_docs)]

mod backstop;
mod canaries;
mod config_error;
mod credentials;
mod decide;
mod hooks;
pub mod host;
mod lint;
mod load;
mod model;
mod needs;
mod network;
mod path_pattern;
mod paths;
mod pattern;
mod plain_list;
mod policy;
pub mod programs;
mod redact_names;
mod risk;
mod selftest;
pub mod shell;
mod signature;
mod suggest;
mod telemetry;
mod url_pattern;
mod word_pattern;
pub mod words;
pub mod world;

pub use backstop::Backstops;
pub use canaries::CanariesFile;
pub use config_error::ConfigError;
pub use credentials::{
    CREDENTIAL_FILES, CREDENTIALS_LAYER, credential_file_named, credentials_layer,
    overrides_credentials,
};
pub use decide::{Decision, PolicySet, Verdict};
pub use hooks::{DEFAULT_HOOK_TIMEOUT, Hook, HookFile, Hooks, HooksFile, compile_hooks};
pub use lint::{LintFinding, Severity, lint_policy};
pub use load::{compile_policy, compile_policy_unlinted, load_policy_file, parse_policy_yaml};
pub use model::{DefaultDecision, MAX_RULES, NetworkFile, PolicyFile, PolicyTest, RuleEntry};
pub use network::{
    AddressRefusal, ConnectionDecision, DEFAULT_PORTS, HostRule, Network, compile_network,
};
pub use paths::{
    LexicalPaths, SignaturePaths, normalize_lexically, parse_interpreter_line, to_slash,
};
pub use pattern::{Pattern, PatternError};
pub use plain_list::{is_shell_word, simple_commands};
pub use policy::{BindError, FILES_PLACEHOLDER, FileTemplate, Policy, Rule};
pub use redact_names::{redact_entry_error, redact_matches};
pub use risk::Risk;
pub use selftest::test_signatures;
pub use signature::{Family, Signature};
pub use suggest::narrowest_rule;
pub use telemetry::{Telemetry, TelemetryFile, TelemetryProtocol, compile_telemetry};
