//! The macOS sandbox: Seatbelt. Commands, checks, hooks and MCP stdio
//! servers start under `/usr/bin/sandbox-exec -p PROFILE`, the profile
//! generated from the task's policy and settings ([`super::seatbelt`]);
//! CPU-time and memory limits are rlimits, set in the child before `exec`.
//!
//! Seatbelt is not counted as a backstop ([`Confinement::confines_writes`]
//! is false): a setuid program still gains its privileges (Linux's
//! `no_new_privs` has no equal here), and the profile decides a program by
//! its path, not its argv or its identity. So the analysis decides as
//! strictly as with no backstop, and the profile is a wall behind it.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::limits::Rlimits;
use super::seatbelt::{Spec, render};
pub use super::unsupervised::{ProcessBound, Watch, remove_leftovers};
use super::{HiddenTree, SandboxError, SandboxMode, SandboxSettings};

/// What sandboxes commands here (`runner doctor`'s `sandbox`).
pub const SANDBOX: &str = "seatbelt";

const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// What a command starts under.
#[derive(Debug)]
pub struct Confinement {
    spec: Spec,
    /// `None`: only the limits (sandbox off, or none to be had).
    profile: Option<String>,
    rlimits: Rlimits,
    pub description: String,
    pub hides: bool,
}

impl Confinement {
    /// The profile for commands writing to `writable` with `hidden`
    /// unreadable; `Ok(None)` when there is nothing to apply.
    pub fn hiding(
        settings: &SandboxSettings,
        writable: &[PathBuf],
        hidden: Option<&HiddenTree>,
    ) -> Result<(Option<Confinement>, String), SandboxError> {
        let rlimits = Rlimits::of(settings);
        let unsandboxed = |d: String, rlimits: Rlimits| {
            let c = (!rlimits.is_empty()).then(|| Confinement {
                spec: Spec::default(),
                profile: None,
                rlimits,
                description: d.clone(),
                hides: false,
            });
            Ok((c, d))
        };
        if settings.mode == SandboxMode::Off {
            return unsandboxed("off".into(), rlimits);
        }
        if !Path::new(SANDBOX_EXEC).exists() {
            let why = format!("{SANDBOX_EXEC} is missing");
            if settings.mode == SandboxMode::Required {
                return Err(SandboxError::Required(why));
            }
            return unsandboxed(
                format!("unavailable ({why}): commands ran unsandboxed (best-effort)"),
                rlimits,
            );
        }
        // Seatbelt compares real paths (/var is /private/var).
        let real = |p: &PathBuf| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        let writable: Vec<PathBuf> = writable.iter().map(real).collect();
        let hidden = hidden
            .filter(|h| HiddenTree::is_hideable(&h.root))
            .map(|h| HiddenTree {
                root: real(&h.root),
                except: h.except.iter().map(real).collect(),
            });
        let spec = Spec::new(settings, &writable, hidden.as_ref());
        let profile = match render(&spec) {
            Ok(p) => p,
            Err(e) if settings.mode == SandboxMode::Required => {
                return Err(SandboxError::Prepare(std::io::Error::other(e)));
            }
            Err(e) => {
                return unsandboxed(
                    format!("unavailable ({e}): commands ran unsandboxed (best-effort)"),
                    rlimits,
                );
            }
        };
        let description = describe(&spec);
        Ok((
            Some(Confinement {
                hides: hidden.is_some(),
                spec,
                profile: Some(profile),
                rlimits,
                description: description.clone(),
            }),
            description,
        ))
    }

    /// The same, with what the policy's deny rules say of files and
    /// programs in the profile.
    pub fn with_policy(mut self, policy: &runner_policy::PolicySet, path: Option<&str>) -> Self {
        if self.profile.is_none() {
            return self;
        }
        self.spec.add_policy(policy, path);
        if let Ok(p) = render(&self.spec) {
            self.profile = Some(p);
            self.description = describe(&self.spec);
        }
        self
    }

    pub fn with_net_log(self, _log: Arc<crate::net::NetLog>) -> Self {
        self
    }

    pub fn pids(&self) -> Option<Arc<ProcessBound>> {
        None
    }

    /// Not counted as a backstop (see the module's docs).
    pub fn confines_writes(&self) -> bool {
        false
    }

    pub fn supervises(&self) -> bool {
        false
    }

    pub fn supervises_exec(&self) -> bool {
        false
    }

    /// No private `/tmp` here: the same confinement.
    pub fn with_private_tmp(
        self,
        _base: &std::path::Path,
        _keeps: &[super::tmp_keeps::Keep],
    ) -> Self {
        self
    }

    pub fn has_private_tmp(&self) -> bool {
        false
    }

    /// Starts `cmd` (from [`Confinement::command`]).
    pub fn spawn(
        &self,
        cmd: &mut tokio::process::Command,
    ) -> std::io::Result<tokio::process::Child> {
        cmd.spawn()
    }

    /// `program` under `sandbox-exec` with the profile, and the limits
    /// set in the child before `exec`.
    pub fn command(
        self: &Arc<Self>,
        program: &OsStr,
    ) -> std::io::Result<(tokio::process::Command, Option<Watch>)> {
        let mut cmd = match &self.profile {
            Some(p) => {
                let mut c = tokio::process::Command::new(SANDBOX_EXEC);
                c.arg("-p").arg(p).arg("--").arg(program);
                c
            }
            None => tokio::process::Command::new(program),
        };
        if !self.rlimits.is_empty() {
            let limits = self.rlimits.clone();
            // SAFETY: only `setrlimit` calls on stack values: safe between
            // fork and exec.
            unsafe {
                cmd.pre_exec(move || limits.apply());
            }
        }
        Ok((cmd, None))
    }
}

/// The transcript's words for a profile.
fn describe(spec: &Spec) -> String {
    let folders: Vec<String> = spec
        .writable
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let mut d = format!(
        "seatbelt: writes only in {}; network {}",
        folders.join(", "),
        match spec.network {
            Some(super::seatbelt::Network::Proxy(Some(port))) =>
                format!("only through the runner's proxy (localhost:{port})"),
            Some(super::seatbelt::Network::Off) => "off".to_string(),
            _ => "on".to_string(),
        }
    );
    if let Some(h) = &spec.hidden {
        d.push_str(&format!("; {} unreadable", h.root.display()));
    }
    d.push_str("; no signal outside the sandbox; system services limited");
    if !spec.denied_programs.is_empty() {
        d.push_str(&format!(
            "; {} denied program executable(s) refused by path",
            spec.denied_programs.len()
        ));
    }
    if !spec.argv_rules.is_empty() {
        d.push_str(&format!(
            "; {} deny rule(s) on arguments decided by the analysis only, strictly (Seatbelt sees paths, not argv)",
            spec.argv_rules.len()
        ));
    }
    d
}

/// A test's process is not put under Seatbelt.
#[cfg(feature = "test-tools")]
pub fn confine_std(
    _cmd: &mut std::process::Command,
    _writable: &[PathBuf],
) -> Result<String, SandboxError> {
    Err(SandboxError::Required(
        "a test's process is confined only on Linux".into(),
    ))
}

/// A test's thread is not put under Seatbelt.
#[cfg(feature = "test-tools")]
pub fn confine_thread(_writable: &[PathBuf]) -> Result<String, SandboxError> {
    Err(SandboxError::Required(
        "a test's thread is confined only on Linux".into(),
    ))
}

/// What `runner doctor` reports here.
pub mod doctor {
    use runner_output::{DoctorBackstop, DoctorReport};

    pub fn examine() -> DoctorReport {
        let seatbelt = std::path::Path::new(super::SANDBOX_EXEC).exists();
        let b = |name: &str, held: bool, why: &str| DoctorBackstop {
            name: name.into(),
            held,
            why: why.into(),
        };
        let not_counted = "Seatbelt confines commands, but is not counted as a backstop (setuid programs keep their privileges; programs are decided by path): the analysis decides strictly";
        DoctorReport {
            workspace_copy: String::new(),
            platform: std::env::consts::OS.into(),
            sandbox: if seatbelt { super::SANDBOX } else { "none" }.into(),
            kernel: String::new(),
            landlock_abi: None,
            seccomp_notify: false,
            supervisor: false,
            user_namespaces: false,
            commands_keep_capabilities: false,
            capabilities: "no capabilities on this platform".into(),
            exec_follow: false,
            daemon_sockets: Vec::new(),
            backstops: vec![
                b("reads", false, not_counted),
                b(
                    "edits",
                    true,
                    "changes to edit-denied paths are reverted on the result (on every platform)",
                ),
                b("confined", false, not_counted),
                b("exec", false, "no supervisor on macOS"),
                b("network", false, not_counted),
            ],
            unreadable: Vec::new(),
            readable: runner_policy::world::READABLE_TREES
                .iter()
                .map(|s| s.to_string())
                .collect(),
        }
    }
}
