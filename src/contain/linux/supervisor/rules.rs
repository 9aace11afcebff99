//! What the supervisor enforces for a task's commands ([`Rules`]: which IP
//! connections, which Unix sockets, which execs, whether signals) and how it answers a
//! call ([`Answer`]); shared by the connect and exec decisions.

use std::path::PathBuf;
use std::sync::Arc;

use crate::contain::os::exec_guard::ExecGuard;

/// Which IP connections a supervised command may make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpRule {
    /// Any (the network is on and no `network:` rules apply).
    Any,
    /// Only the runner's proxy on 127.0.0.1 at this port.
    Proxy(u16),
}

/// What the supervisor enforces for one task's commands.
#[derive(Debug, Clone)]
pub struct Rules {
    pub ip: IpRule,
    /// Unix sockets may be reached inside these folders (canonical).
    pub unix_within: Vec<PathBuf>,
    /// Whether signals are decided (Landlock cannot scope them here).
    pub signals: bool,
    /// The exec wall, where the policy denies programs.
    pub exec: Option<Arc<ExecGuard>>,
    /// Where refused connections are recorded (the task's connections,
    /// in its transcript); none outside a run.
    pub log: Option<Arc<crate::net::NetLog>>,
    /// What sockets commands may open (the filter refuses the rest).
    pub sockets: crate::contain::os::seccomp::Sockets,
    /// Whether Landlock confines the commands' writes to `unix_within`
    /// (what a loader's program may be swapped in: see `exec`).
    pub writes_confined: bool,
    /// Whether each exec the wall lets go is followed to where the kernel
    /// commits it and decided again there (see `follow`): where ptrace
    /// may be had.
    pub follows: bool,
    /// Whether a caller's wait in a notification is killable-only once
    /// received (`SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV`): then a followed
    /// exec is interrupted before it is answered, and stops as its call
    /// ends whether it committed or not (see `follow`).
    pub killable_recv: bool,
    /// Whether `setsid` and `setpgid` are decided (the groups a command
    /// makes recorded, to be killed with it; see `groups`): wherever a
    /// supervisor serves the filter. A test's confinement with none lets
    /// them through (its filter would fail them, `ENOSYS`).
    pub groups: bool,
    /// Where commands have a private `/tmp`: their paths as the runner
    /// finds them (see `private_tmp`).
    pub tmp: Option<Arc<crate::contain::os::private_tmp::TmpView>>,
    /// The exec refusal the task's spawns said last on stderr: shared by
    /// the task's copies of these rules, so one refusal met twice in a row
    /// (a plain command, then bash trying it) is said once.
    pub(super) said: Arc<std::sync::Mutex<Option<crate::contain::ExecRefusal>>>,
}

impl Rules {
    pub fn new(ip: IpRule, unix_within: &[PathBuf], signals: bool) -> Self {
        Self {
            ip,
            signals,
            unix_within: unix_within
                .iter()
                .map(|p| p.canonicalize().unwrap_or_else(|_| p.clone()))
                .collect(),
            exec: None,
            log: None,
            groups: true,
            sockets: crate::contain::os::seccomp::Sockets::Any,
            writes_confined: false,
            follows: false,
            killable_recv: false,
            tmp: None,
            said: Arc::default(),
        }
    }

    /// The same rules, for commands with a private `/tmp` seen as `view`.
    pub fn with_tmp(&self, view: Arc<crate::contain::os::private_tmp::TmpView>) -> Self {
        Self {
            tmp: Some(view),
            ..self.clone()
        }
    }

    /// `path`, as a command names it, as the runner finds it.
    pub(super) fn runner_path(&self, path: PathBuf) -> PathBuf {
        match &self.tmp {
            Some(v) if path.is_absolute() => v.runner_path(&path),
            _ => path,
        }
    }

    /// The same rules, deciding execs with `guard` too.
    pub fn with_exec(&self, guard: Arc<ExecGuard>) -> Self {
        Self {
            exec: Some(guard),
            ..self.clone()
        }
    }

    /// The same rules, with `setsid` and `setpgid` let through (no
    /// supervisor serves the filter).
    pub fn without_groups(&self) -> Self {
        Self {
            groups: false,
            ..self.clone()
        }
    }

    /// The same rules, recording refused connections in `log`.
    pub fn with_log(&self, log: Arc<crate::net::NetLog>) -> Self {
        Self {
            log: Some(log),
            ..self.clone()
        }
    }

    /// Refuses a connection to `host` (an address, a socket's path) and
    /// `port` (0 for a Unix socket), with a line in the log and a record in
    /// the task's connections.
    pub(super) fn refuse(&self, host: String, port: u16, what: String) -> Answer {
        tracing::warn!("sandbox: connection refused: {what}");
        if let Some(log) = &self.log {
            log.push(runner_output::Connection {
                time_ms: log.now_ms(),
                via: runner_output::ConnectionVia::Sandbox,
                host,
                port,
                address: None,
                allowed: false,
                rule: None,
                policy: None,
                line: None,
                reason: format!("refused by the sandbox's supervisor: {what}"),
                bytes_sent: 0,
                bytes_received: 0,
                duration_ms: 0,
            });
        }
        Answer::Error(libc::EPERM)
    }
}

/// How the supervisor answers one call.
pub(super) enum Answer {
    /// The call runs as the command made it (nothing to decide).
    Continue,
    /// The call returns this.
    Value(i64),
    /// The call fails with this errno.
    Error(i32),
}
