//! The integration tests, as one test binary (linking one binary instead of
//! nine saves most of the link time of `cargo test` after a change). The
//! memory test stays a binary of its own (tests/output_memory.rs): it
//! measures its children's peak memory and must not share a process with
//! other tests.

mod common;

mod action;
mod agents;
mod backstops;
mod batch;
mod big_diffs;
mod book;
mod canaries;
mod canaries_https;
mod cli_ci;
mod cli_run;
mod compare;
mod containment;
mod context_windows;
mod crash;
mod credentials;
mod doctor;
mod error_classes;
mod exec;
mod exec_commit;
mod exec_wall;
mod fallback;
mod fleet;
mod getting_started;
mod git_workspace;
mod history;
mod hooks;
mod init_action;
mod leftovers;
mod links;
mod local_servers;
mod long_runs;
mod matrix;
mod mcp;
mod network;
mod one_decision;
mod ordinary_corpus;
mod overlay;
mod plain_commands;
mod policy_corpus;
mod policy_props;
mod private_tmp;
mod privileges;
mod process_bound;
mod providers;
mod rate_limits;
mod readable_world;
mod readme;
mod redaction;
mod repeat;
mod reports;
mod responses_api;
mod resume;
mod seatbelt;
mod service_tiers;
mod shadow;
mod shell_differential;
mod signals;
mod start;
mod structured;
mod telemetry;
mod tools;
mod tripwires;
