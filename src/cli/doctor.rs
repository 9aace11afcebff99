//! `runner doctor [--format text|json] [--require LIST]`: what this machine
//! offers the sandbox (Landlock, seccomp's user notification, the
//! supervisor, user namespaces, daemons a command could reach), and which
//! backstops a run here would hold behind the policy's deny rules, with
//! why for each one missing. `--require` makes it a workflow's first step:
//! exit 1 when a backstop the team counts on is missing.
//!
//! The backstops are those of a task with the default sandbox
//! (`best-effort`) and network rules: what `runner run` would hold here.

use runner_output::DoctorReport;

use super::{CliError, CliResult, Exit};

/// The backstops `--require` may name.
pub const BACKSTOPS: &[&str] = &[
    "reads",
    "edits",
    "confined",
    "exec",
    "private-tmp",
    "network",
];

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DoctorFormat {
    /// Aligned lines for a person.
    Text,
    /// One JSON object (`runner schema doctor`).
    Json,
}

pub fn doctor(format: DoctorFormat, require: &[String]) -> CliResult {
    for name in require {
        if !BACKSTOPS.contains(&name.as_str()) {
            return Err(CliError::Invalid(format!(
                "--require {name}: not a backstop (reads, edits, confined, exec, private-tmp, network)"
            )));
        }
    }
    let mut report = crate::contain::doctor::examine();
    report.workspace_copy = crate::workspace::overlay::probe();
    match format {
        DoctorFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        ),
        DoctorFormat::Text => print!("{}", text(&report)),
    }
    let missing: Vec<String> = report
        .backstops
        .iter()
        .filter(|b| !b.held && require.contains(&b.name))
        .map(|b| format!("{} ({})", b.name, b.why))
        .collect();
    if missing.is_empty() {
        return Ok(Exit::Passed);
    }
    eprintln!(
        "runner doctor: required backstop(s) missing here: {}",
        missing.join("; ")
    );
    Ok(Exit::Failed)
}

fn text(r: &DoctorReport) -> String {
    let yes = |b: bool| if b { "yes" } else { "no" };
    let mut out = format!("platform         {} {}\n", r.platform, r.kernel);
    out.push_str(&format!("sandbox          {}\n", r.sandbox));
    out.push_str(&format!(
        "landlock         {}\n",
        r.landlock_abi
            .map_or("no".to_string(), |a| format!("ABI {a}"))
    ));
    out.push_str(&format!("seccomp notify   {}\n", yes(r.seccomp_notify)));
    out.push_str(&format!("supervisor       {}\n", yes(r.supervisor)));
    out.push_str(&format!("user namespaces  {}\n", yes(r.user_namespaces)));
    out.push_str(&format!("exec follow      {}\n", yes(r.exec_follow)));
    out.push_str(&format!("capabilities     {}\n", r.capabilities));
    out.push_str(&format!("workspace copy   {}\n", r.workspace_copy));
    out.push_str(&format!(
        "daemon sockets   {}\n",
        if r.daemon_sockets.is_empty() {
            "none reachable".to_string()
        } else {
            r.daemon_sockets.join(", ")
        }
    ));
    out.push_str(&format!("readable world   {}\n", r.readable.join(", ")));
    if !r.unreadable.is_empty() {
        out.push_str(&format!(
            "unreadable       {} (but a home's toolchains and caches)\n",
            r.unreadable.join(", ")
        ));
    }
    out.push_str("backstops\n");
    for b in &r.backstops {
        out.push_str(&format!(
            "  {:<11} {:<4} {}\n",
            b.name,
            if b.held { "held" } else { "no" },
            b.why
        ));
    }
    out
}
