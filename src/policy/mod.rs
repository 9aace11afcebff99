//! The permission engine (DESIGN §4): a pure library.
//!
//! Tools turn calls into [`Signature`]s; a [`Policy`] (one file) holds rules
//! over signatures; a [`PolicySet`] layers the task's policy with any
//! `--policy` files and decides each call. Every layer must allow a call for
//! it to run, so a task file can never loosen a policy given on the command
//! line. Nothing here knows about tools or the engine; `runner check` drives
//! it directly.

mod decide;
mod expand;
mod file;
mod pattern;
pub mod programs;
pub mod shell;
mod signature;
pub mod words;

pub use decide::{Decision, PolicySet, Verdict};
pub use file::{
    DefaultDecision, Policy, PolicyFile, PolicyTest, Rule, RuleEntry, load_policy_file,
    parse_policy_yaml, test_signatures,
};
pub use pattern::{Pattern, PatternError};
pub use signature::{Family, Signature};
