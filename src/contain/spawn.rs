//! Starting a command under a task's confinement: one call on every
//! platform, so that the callers (the bash tool, checks and hooks, MCP
//! stdio servers, `runner sandbox`) name none. On Linux the confinement
//! is applied in the child before `exec` and the supervisor watches it; on
//! macOS the program is started by `sandbox-exec` with the task's profile;
//! in a portable build it starts as it is.

use std::ffi::OsStr;
use std::sync::Arc;

use super::Confinement;
use super::os::Watch;

/// A command to start confined: set its arguments, folder, environment
/// and pipes on [`ConfinedCommand::cmd`], then [`ConfinedCommand::spawn`].
pub struct ConfinedCommand {
    pub cmd: tokio::process::Command,
    watch: Option<Watch>,
    confine: Option<Arc<Confinement>>,
}

impl ConfinedCommand {
    /// `program` under `confine` (`None`: as it is).
    pub fn new(
        confine: Option<&Arc<Confinement>>,
        program: impl AsRef<OsStr>,
    ) -> std::io::Result<Self> {
        let (cmd, watch) = match confine {
            Some(c) => c.command(program.as_ref())?,
            None => (tokio::process::Command::new(program), None),
        };
        Ok(Self {
            cmd,
            watch,
            confine: confine.cloned(),
        })
    }

    /// Starts it, and tells the supervisor (where it runs) which process
    /// it watches.
    pub fn spawn(&mut self) -> std::io::Result<tokio::process::Child> {
        let spawned = match &self.confine {
            Some(c) => c.spawn(&mut self.cmd),
            None => self.cmd.spawn(),
        };
        if let Some(w) = &mut self.watch {
            w.spawned(spawned.as_ref().ok().and_then(|c| c.id()));
        }
        spawned
    }

    /// The execs the supervisor refused so far.
    pub fn exec_refusals(&self) -> Vec<ExecRefusal> {
        self.watch
            .as_ref()
            .map(Watch::exec_refusals)
            .unwrap_or_default()
    }

    /// The calls the sandbox refused with nothing to decide, where the
    /// supervisor saw them.
    pub fn refused_calls(&self) -> Vec<RefusedCall> {
        self.watch
            .as_ref()
            .map(Watch::refused_calls)
            .unwrap_or_default()
    }

    /// Kills the process groups the command's processes made, where the
    /// supervisor saw them made (Linux): what left the command's group
    /// ends with it. Call when the command ends, after its own group is
    /// killed; also done when this is dropped.
    pub fn end_escapes(&self) {
        if let Some(w) = &self.watch {
            w.end_escapes();
        }
    }
}

impl Drop for ConfinedCommand {
    fn drop(&mut self) {
        self.end_escapes();
    }
}

/// A refused exec, as the tool call records it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ExecRefusal {
    pub argv: Vec<String>,
    /// `deny Bash(git push:*)`.
    pub rule: String,
    pub policy: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// Why the rule refuses an argv it does not match as written: the
    /// program's model cannot read the arguments, or cargo's or gh's
    /// aliases cannot be read. None when the argv matches the rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Refused where the kernel committed the exec (the file it mapped,
    /// the argv it placed), after the first look let it go: the process
    /// was ended before the program ran.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ended: bool,
}

/// A system call the sandbox refused with nothing to decide (a socket
/// kind, a foreign ABI, `io_uring`, a call that builds a world the walls
/// cannot see into), as the tool call records it: which call, the
/// command that made it, and how often.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RefusedCall {
    /// `socket(AF_INET, SOCK_DGRAM)`, `chroot`.
    pub call: String,
    /// The command line of the process that made it.
    pub command: String,
    pub count: u32,
}

impl std::fmt::Display for RefusedCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} by `{}`", self.call, self.command)?;
        if self.count > 1 {
            write!(f, " ({} times)", self.count)?;
        }
        Ok(())
    }
}

/// How a refusal reads, for the model and the logs: "`git push origin` is
/// denied by `deny Bash(git push:*)` (policy.yaml)", and its reason.
impl std::fmt::Display for ExecRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}` is denied by `{}` ({})",
            self.argv.join(" "),
            self.rule,
            self.policy
        )?;
        if let Some(why) = &self.reason {
            write!(f, ": {why}")?;
        }
        if self.ended {
            write!(
                f,
                " (seen where the kernel ran it; the process was ended before the program ran)"
            )?;
        }
        Ok(())
    }
}
