//! `runner`: runs LLM coding agents in CI with declarative tool permissions.
//!
//! The crate follows the flow of one run: [`task`] files are
//! loaded and validated, the [`engine`] drives a [`provider`]'s model through
//! the [`tools`], every call is decided by the [`policy`] engine, the agent
//! works in an isolated copy of the [`workspace`], and [`report`] writes the
//! transcript, diff, JUnit XML and summary. What an allowed command can
//! reach is limited by [`contain`] (environment, redaction, sandbox).
//! [`telemetry`] sends a run's traces and metrics over OTLP when asked.

pub(crate) mod canary;
pub(crate) mod cleanup;
pub mod cli;
pub(crate) mod contain;
pub(crate) mod duration;
pub mod engine;
pub(crate) mod fleet;
pub(crate) mod git;
pub(crate) mod hash;
pub(crate) mod mcp;
pub mod net;
pub(crate) mod pidfd;
pub(crate) mod process;
pub mod provider;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod sys;
pub use contain::hide_own_secrets;
pub use run::decide_exit;
pub mod task;
pub mod telemetry;
#[cfg(feature = "test-tools")]
pub mod testkit;
pub mod tools;
pub mod workspace;
