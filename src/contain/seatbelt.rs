//! The macOS sandbox profile of a task's commands, as text in Seatbelt's
//! profile language (SBPL), for `sandbox-exec -p`.
//!
//! Generated on every platform from a [`Spec`]: a macOS run applies it
//! (`os` on macOS), and `runner sandbox TASK --platform macos --print`
//! shows it anywhere. The golden tests (`tests/it/seatbelt.rs`) pin its
//! text for policies with read, edit, network and program denies.
//!
//! **Shape.** The profile starts from `(allow default)` and takes away, so
//! that what a build needs from the system keeps working; in SBPL a later
//! rule overrides an earlier one it overlaps, so each `deny` is followed by
//! the narrower `allow`s it leaves:
//! - writes only in the task's copy, its temp folder and the folders the
//!   task adds (and the terminal devices), and never to the one path an
//!   edit or read deny rule names from the workspace's root
//!   ([`runner_policy::Pattern::fixed_path`]: `.github/**`, `./.env`); a
//!   pattern at any depth or with a wildcard (`Cargo.lock`, `**/.env`,
//!   `*.pem`) is left to the revert of denied changes on the result,
//!   which holds on every platform;
//! - the original workspace unreadable (the copy stands in for it), but
//!   for git's object stores that the copy reads through;
//! - outbound connections only to the runner's proxy on `localhost`, by
//!   address and port, and to Unix sockets inside the task's folders (no
//!   daemon outside the task); no network at all with `network: false`;
//! - lookups of system services (`mach-lookup`) only of those a command
//!   line needs (user and group names, logging, preferences, certificate
//!   trust), so that no service can be asked to act for a command
//!   outside the sandbox (open a terminal, run a script);
//! - signals only to processes in the same sandbox (never the runner);
//! - the executables of programs the policy denies whatever their
//!   arguments (`Bash(curl:*)`) refused by path (`process-exec`). Seatbelt sees the
//!   path, not the argv: a rule on arguments (`Bash(git push:*)`) stays
//!   with the analysis, which decides it strictly, and the profile lists
//!   it in a comment.
//!
//! **Escaping.** Paths go into SBPL string literals, where `"` and `\`
//! are escaped with a backslash; parentheses and non-ASCII characters
//! need nothing inside a string (the profile is UTF-8, and Seatbelt
//! compares paths as bytes). A path that is not UTF-8, or holds a control
//! character, cannot be written safely: the profile is refused
//! ([`SeatbeltError`]), and the task runs as with no sandbox.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use runner_policy::{Family, PolicySet};

use super::{HiddenTree, SandboxSettings};

/// What commands get of the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Network {
    /// No rule: the network is open.
    On,
    /// `network: false`, or `network:` rules that cannot be held.
    Off,
    /// Only the runner's proxy on this port of `localhost`; `None` where
    /// no run has chosen it (`runner sandbox --print` shows `PORT`).
    Proxy(Option<u16>),
}

/// A program the policy denies whatever its arguments, and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeniedProgram {
    /// The executable (canonical: Seatbelt sees the file's real path).
    pub path: PathBuf,
    /// `deny Bash(curl:*)`.
    pub rule: String,
}

/// A path of the copy commands may not write, and the rule naming it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unwritable {
    pub path: PathBuf,
    /// What is beneath the path (`.github/**`), not the path itself.
    pub beneath: bool,
    /// `deny Edit(.github/**)`.
    pub rule: String,
}

/// What a task's profile is made from.
#[derive(Debug, Clone, Default)]
pub struct Spec {
    /// The task's copy, its temp folder, and the folders it adds.
    pub writable: Vec<PathBuf>,
    /// Paths in the copy that edit or read deny rules name one by one.
    pub unwritable: Vec<Unwritable>,
    /// Deny rules on paths that name no one path (at any depth, a
    /// wildcard, absolute): reverted
    /// on the result, listed in a comment.
    pub reverted_only: Vec<String>,
    pub hidden: Option<HiddenTree>,
    pub network: Option<Network>,
    pub denied_programs: Vec<DeniedProgram>,
    /// Deny rules on a program's arguments, which Seatbelt cannot express.
    pub argv_rules: Vec<String>,
}

/// A path the profile cannot hold.
#[derive(Debug, thiserror::Error)]
#[error("a Seatbelt profile cannot name {path:?} (not UTF-8, or a control character in it)")]
pub struct SeatbeltError {
    pub path: PathBuf,
}

/// The system services a command line needs (see the module's docs).
const SERVICES: &[&str] = &[
    "com.apple.system.opendirectoryd.libinfo",
    "com.apple.system.opendirectoryd.membership",
    "com.apple.system.logger",
    "com.apple.logd",
    "com.apple.system.notification_center",
    "com.apple.cfprefsd.daemon",
    "com.apple.cfprefsd.agent",
    "com.apple.trustd.agent",
    "com.apple.SecurityServer",
    "com.apple.PowerManagement.control",
    "com.apple.bsd.dirhelper",
];

impl Spec {
    /// The profile's frame for commands writing to `writable` (the task's
    /// copy first) under `settings`, with `hidden` unreadable.
    pub fn new(
        settings: &SandboxSettings,
        writable: &[PathBuf],
        hidden: Option<&HiddenTree>,
    ) -> Self {
        let network = match settings.proxy_port {
            Some(port) if settings.network => Network::Proxy(Some(port)),
            _ if settings.network => Network::On,
            _ => Network::Off,
        };
        Self {
            writable: writable.to_vec(),
            hidden: hidden.cloned(),
            network: Some(network),
            ..Self::default()
        }
    }

    /// Adds what `policy`'s deny rules say of files and programs: paths
    /// in the copy (`writable[0]`) that may not be written, and programs
    /// found on `path` (the commands' `PATH`) that may not run.
    pub fn add_policy(&mut self, policy: &PolicySet, path: Option<&str>) {
        let copy = self.writable.first().cloned().unwrap_or_default();
        for layer in policy.layers() {
            for rule in layer.rules.iter().filter(|r| !r.allow) {
                let text = &rule.pattern.text;
                let said = format!("deny {text}");
                match rule.pattern.family {
                    Family::Edit | Family::Read => match rule.pattern.fixed_path() {
                        Some((rel, beneath)) if !copy.as_os_str().is_empty() => {
                            self.unwritable.push(Unwritable {
                                path: copy.join(rel),
                                beneath,
                                rule: said,
                            });
                        }
                        _ => self.reverted_only.push(said),
                    },
                    Family::Bash => match rule.pattern.program() {
                        Some(program) if rule.pattern.names_program_whole() => {
                            let found = executables(program, path);
                            if found.is_empty() {
                                self.argv_rules.push(format!("{said} (not found on PATH)"));
                            }
                            for exe in found {
                                self.denied_programs.push(DeniedProgram {
                                    path: exe,
                                    rule: said.clone(),
                                });
                            }
                        }
                        _ => self.argv_rules.push(said),
                    },
                    _ => {}
                }
            }
        }
    }
}

/// The executables named `program` on `path`, each by its real path.
fn executables(program: &str, path: Option<&str>) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    for (candidate, _) in super::programs_on_path(program, path) {
        if let Ok(real) = std::fs::canonicalize(&candidate)
            && !found.contains(&real)
        {
            found.push(real);
        }
    }
    found
}

/// `path` as an SBPL string literal.
pub fn quote(path: &Path) -> Result<String, SeatbeltError> {
    let refuse = || SeatbeltError {
        path: path.to_path_buf(),
    };
    let text = path.to_str().ok_or_else(refuse)?;
    if text.chars().any(char::is_control) {
        return Err(refuse());
    }
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if matches!(c, '"' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    Ok(out)
}

/// A rule's text in a comment (one line, whatever it holds).
fn comment(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The profile of `spec`.
pub fn render(spec: &Spec) -> Result<String, SeatbeltError> {
    let mut p = String::from(
        "(version 1)\n\
         ; The runner's Seatbelt profile for a task's commands (generated).\n\
         (allow default)\n",
    );
    p.push_str("\n; Writes: only the task's folders and the terminal.\n(deny file-write*)\n(allow file-write*\n");
    for w in &spec.writable {
        let _ = writeln!(p, "  (subpath {})", quote(w)?);
    }
    p.push_str(
        "  (literal \"/dev/null\")\n  (literal \"/dev/zero\")\n  (literal \"/dev/tty\")\n  (regex #\"^/dev/fd/[0-9]+$\")\n  (regex #\"^/dev/ttys[0-9]+$\"))\n",
    );
    if !spec.unwritable.is_empty() {
        p.push_str("\n; Paths the policy denies editing (or reading).\n");
        for u in &spec.unwritable {
            let filter = if u.beneath { "subpath" } else { "literal" };
            let _ = writeln!(p, "; {}", comment(&u.rule));
            let _ = writeln!(p, "(deny file-write* ({filter} {}))", quote(&u.path)?);
        }
    }
    if !spec.reverted_only.is_empty() {
        p.push_str("; Reverted on the result instead (no one path in the copy):\n");
        for rule in &spec.reverted_only {
            let _ = writeln!(p, ";   {}", comment(rule));
        }
    }
    if let Some(h) = &spec.hidden {
        p.push_str("\n; Reads: not the original workspace (the copy stands in for it).\n");
        let _ = writeln!(
            p,
            "(deny file-read* file-write* (subpath {}))",
            quote(&h.root)?
        );
        if !h.except.is_empty() {
            p.push_str("(allow file-read*\n");
            for e in &h.except {
                let _ = write!(p, "  (subpath {})", quote(e)?);
                p.push('\n');
            }
            p.truncate(p.len() - 1);
            p.push_str(")\n");
        }
    }
    match spec.network {
        None | Some(Network::On) => {}
        Some(net) => {
            p.push_str("\n; Network: ");
            p.push_str(match net {
                Network::Proxy(_) => "only the runner's proxy, and Unix sockets inside the task.\n",
                _ => "none; Unix sockets inside the task only.\n",
            });
            p.push_str("(deny network-outbound)\n");
            match net {
                Network::Proxy(Some(port)) => {
                    let _ = writeln!(
                        p,
                        "(allow network-outbound (remote ip \"localhost:{port}\"))"
                    );
                }
                Network::Proxy(None) => p.push_str(
                    "; PORT: the task's proxy, whose port a run chooses when it starts.\n(allow network-outbound (remote ip \"localhost:PORT\"))\n",
                ),
                _ => {}
            }
            let folders: Vec<String> = spec
                .writable
                .iter()
                .map(|w| quote(w).map(|q| format!("  (subpath {q})")))
                .collect::<Result<_, _>>()?;
            if !folders.is_empty() {
                p.push_str("(allow network-outbound\n");
                p.push_str(&folders.join("\n"));
                p.push_str(")\n");
            }
        }
    }
    p.push_str("\n; System services: only what a command line needs.\n(deny mach-lookup)\n(allow mach-lookup\n");
    let services: Vec<String> = SERVICES
        .iter()
        .map(|s| format!("  (global-name \"{s}\")"))
        .collect();
    p.push_str(&services.join("\n"));
    p.push_str(")\n");
    p.push_str("\n; Signals: only within this sandbox (never the runner).\n(deny signal)\n(allow signal (target same-sandbox))\n");
    if !spec.denied_programs.is_empty() {
        p.push_str("\n; Programs the policy denies, by their executables.\n");
        for d in &spec.denied_programs {
            let _ = writeln!(p, "; {}", comment(&d.rule));
            let _ = writeln!(p, "(deny process-exec (literal {}))", quote(&d.path)?);
        }
    }
    if !spec.argv_rules.is_empty() {
        p.push_str(
            "\n; Decided by the analysis only, strictly (Seatbelt sees a program's path, not its arguments):\n",
        );
        for rule in &spec.argv_rules {
            let _ = writeln!(p, ";   {}", comment(rule));
        }
    }
    Ok(p)
}
