//! The Linux sandbox for commands, checks, hooks and MCP stdio servers.
//!
//! Landlock (kernel 5.13+) limits writes to the task's workspace copy, its
//! private temp folder, `/dev/null` and the paths a task adds (and, from
//! ABI 4, TCP connects); the supervisor decides connects, execs, signals
//! and process groups ([`supervisor`]); seccomp filters refuse what needs
//! no decision: sockets the network does not allow ([`seccomp`]), calls
//! that build worlds the walls cannot see into ([`privileges`]), and what
//! reaches the runner itself ([`runner_wall`]). Commands drop their
//! capabilities. CPU-time and memory limits are rlimits; the process
//! bound is [`pids`]'s.
//!
//! The ruleset and the filters are built in the runner
//! ([`Confinement::new`]); the child only makes system calls
//! ([`Confinement::apply`]), which is what may safely run between `fork`
//! and `exec` in a threaded program. This file puts them together per
//! task and says what holds.

mod aliases;
mod describe;
pub mod doctor;
pub mod exec_guard;
pub mod landlock;
mod nproc;
pub mod pids;
mod policy;
pub mod private_tmp;
pub mod privileges;
mod runner_wall;
mod seccomp;
mod spawner;
pub mod supervisor;
#[cfg(test)]
mod test_support;
mod trace_wall;

use std::ffi::OsStr;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::Arc;

use self::landlock::{Net, build_ruleset, landlock_abi};
pub use self::supervisor::Supervised as Watch;
use self::supervisor::{IpRule, Rules};
use super::limits::Rlimits;
use super::{HiddenTree, SandboxError, SandboxMode, SandboxSettings};

/// What sandboxes commands here (`runner doctor`'s `sandbox`).
pub const SANDBOX: &str = "landlock";

/// What keeps a task's process bound alive (see [`pids`]).
pub type ProcessBound = pids::PidsCgroup;

/// Ends what the sandbox left on the machine (the process groups commands
/// made, the tasks' cgroups), on a hurried exit.
pub fn remove_leftovers() {
    supervisor::end_all_escapes();
    pids::remove_all();
}

/// What a child applies to itself before `exec`.
#[derive(Debug)]
pub struct Confinement {
    ruleset: Option<OwnedFd>,
    filter: Vec<libc::sock_filter>,
    rlimits: Rlimits,
    /// For the transcript: what is enforced.
    pub description: String,
    /// Whether the [`HiddenTree`] asked for is unreadable.
    pub hides: bool,
    /// What the supervisor decides for these commands, where it runs
    /// (see [`super::supervisor`]), and its filter.
    supervisor: Option<(Arc<Rules>, Vec<libc::sock_filter>)>,
    /// The task's process bound, which each command joins.
    pids: Option<Arc<pids::PidsCgroup>>,
    /// `network: false`: the network programs' deny rules have a wall.
    network_off: bool,
    /// The filter of [`privileges`], where no supervisor holds it.
    privileges: Vec<libc::sock_filter>,
    /// No Landlock: the runner is not dumpable, and a task may not keep
    /// `CAP_SYS_PTRACE` (see [`trace_wall`]).
    drops_ptrace: bool,
    /// The capabilities commands keep (bit N: capability N); every other
    /// is dropped where the sandbox is on ([`privileges`]).
    keep_caps: u64,
    /// Neither Landlock's signal scope nor the supervisor: the runner's
    /// own wall (see [`Confinement::sandboxed`]) refuses signals to the
    /// runner too.
    walls_signals: bool,
    /// A `/tmp` of the task's own, where one can be had ([`private_tmp`]).
    private_tmp: Option<private_tmp::PrivateTmp>,
}

impl Confinement {
    /// [`Confinement::new`], and commands cannot read `hidden` (when the
    /// kernel has Landlock and the tree [`HiddenTree::is_hideable`]).
    pub fn hiding(
        settings: &SandboxSettings,
        writable: &[PathBuf],
        hidden: Option<&HiddenTree>,
    ) -> Result<(Option<Confinement>, String), SandboxError> {
        // With the sandbox off, only a bound the task asked for.
        let bound = if settings.mode == SandboxMode::Off && settings.processes.is_none() {
            pids::Bound::default()
        } else {
            pids::bound(settings.processes)
        };
        Self::bounded(settings, writable, hidden, bound)
    }

    /// [`Confinement::hiding`] with the process bound `bound`.
    ///
    /// Landlock confines writes (and reads of the hidden tree); the
    /// supervisor decides signals, connections, process groups and execs.
    /// Each holds without the other: with no Landlock (`best-effort`) the
    /// supervisor still runs, so a command that may write anywhere still
    /// cannot kill the runner, reach a daemon's socket or start a denied
    /// program unseen, and `network:` rules still hold through the proxy.
    fn bounded(
        settings: &SandboxSettings,
        writable: &[PathBuf],
        hidden: Option<&HiddenTree>,
        bound: pids::Bound,
    ) -> Result<(Option<Confinement>, String), SandboxError> {
        let mut rlimits = Rlimits::of(settings);
        if let Some(n) = bound.nproc {
            rlimits = rlimits.with_processes(n);
        }
        let (pids, pids_note) = (bound.cgroup, bound.note);
        if settings.mode == SandboxMode::Off {
            // `network:` rules hold even where nothing else is confined:
            // by no network at all.
            let rules = settings.proxy_port.is_some();
            let d = format!(
                "off{}{pids_note}",
                if rules {
                    describe::OFF_FOR_RULES_WITH_SANDBOX_OFF
                } else {
                    ""
                }
            );
            return Ok(Self::unsandboxed(d, rules, rlimits, pids, false, 0));
        }
        let landlock = landlock_abi().map_err(|why| why.to_string());
        if let (Err(why), SandboxMode::Required) = (&landlock, settings.mode) {
            return Err(SandboxError::Required(why.clone()));
        }
        let abi = landlock.as_ref().ok().copied();
        let supervised = supervisor::available();
        // The supervisor decides every connect by address and port;
        // Landlock's rule (ABI 4) by port alone. Either takes the proxy;
        // with neither, `network:` rules mean no network.
        let net = match settings.proxy_port {
            Some(port) if settings.network && (supervised.is_ok() || abi >= Some(4)) => {
                Net::Proxy(port)
            }
            Some(_) if settings.network => Net::OffForRules,
            _ if settings.network => Net::On,
            _ => Net::Off,
        };
        if landlock.is_err() {
            trace_wall::guard_runner();
        }
        if let (Err(why), Err(no)) = (&landlock, &supervised) {
            let d = describe::unsandboxed(why, no, &net)
                + &describe::privileges(&settings.keep_capabilities)
                + &pids_note;
            let no_network = !matches!(net, Net::On);
            let keep = settings.kept_capabilities();
            return Ok(Self::unsandboxed(d, no_network, rlimits, pids, true, keep));
        }
        let hidden = hidden.filter(|h| abi.is_some() && HiddenTree::is_hideable(&h.root));
        let unreadable: Vec<_> = hidden.into_iter().chain(&settings.unreadable).collect();
        let ruleset = abi
            .map(|abi| build_ruleset(abi, writable, &unreadable, &net))
            .transpose()
            .map_err(SandboxError::Prepare)?;
        let sockets = match net {
            Net::On => seccomp::Sockets::Any,
            Net::Proxy(_) => seccomp::Sockets::Proxy,
            Net::Off | Net::OffForRules => seccomp::Sockets::Off,
        };
        // The supervisor's filter holds the socket rules itself (and
        // records what they refuse); without it, this filter does.
        let filter = if supervised.is_ok() {
            Vec::new()
        } else {
            seccomp::socket_filter(sockets)
        };
        let supervisor = match &supervised {
            Ok(()) => {
                let ip = match net {
                    Net::Proxy(port) => IpRule::Proxy(port),
                    _ => IpRule::Any,
                };
                // Landlock scopes signals from ABI 6; below it, or without
                // it, the supervisor decides them.
                let signals = abi.is_none_or(|abi| abi < 6);
                let mut rules = Rules::new(ip, writable, signals);
                rules.sockets = sockets;
                rules.writes_confined = abi.is_some();
                rules.follows = supervisor::follow::available().is_ok();
                rules.killable_recv = rules.follows && supervisor::killable_recv();
                let rules = Arc::new(rules);
                let filter = supervisor::filter(&rules);
                Some((rules, filter))
            }
            Err(why) => {
                tracing::debug!("no supervisor: {why}");
                None
            }
        };
        let description = describe::confined(&describe::Held {
            landlock: landlock.as_ref().copied().map_err(String::as_str),
            writable,
            net: &net,
            hidden: hidden.map(|h| h.root.as_path()),
            no_supervisor: supervised.as_ref().err(),
        }) + &describe::privileges(&settings.keep_capabilities)
            + &describe::world(abi.is_some(), &settings.unreadable)
            + &pids_note;
        Ok((
            Some(Confinement {
                ruleset,
                filter,
                rlimits,
                description: description.clone(),
                hides: hidden.is_some(),
                supervisor,
                pids,
                network_off: !settings.network,
                privileges: privileges::filter(),
                drops_ptrace: abi.is_none(),
                keep_caps: settings.kept_capabilities(),
                walls_signals: supervised.is_err() && abi.is_some_and(|abi| abi < 6),
                private_tmp: None,
            }),
            description,
        ))
    }

    /// What commands get without Landlock or the supervisor (sandbox
    /// off, or neither to be had): no network at all when the policy's
    /// network rules cannot be held, the limits, `CAP_SYS_PTRACE` dropped
    /// (`drops_ptrace`: not with the sandbox off), and the description
    /// `d`. `None` when that is nothing.
    fn unsandboxed(
        d: String,
        no_network: bool,
        rlimits: Rlimits,
        pids: Option<Arc<pids::PidsCgroup>>,
        drops_ptrace: bool,
        keep_caps: u64,
    ) -> (Option<Confinement>, String) {
        let filter = if no_network {
            seccomp::socket_filter(seccomp::Sockets::Off)
        } else if drops_ptrace {
            // Sandbox on, neither wall: no datagram Unix socket either.
            seccomp::socket_filter(seccomp::Sockets::Any)
        } else {
            Vec::new()
        };
        let something = drops_ptrace || !rlimits.is_empty() || !filter.is_empty() || pids.is_some();
        let c = something.then(|| Confinement {
            ruleset: None,
            filter,
            rlimits,
            description: d.clone(),
            hides: false,
            supervisor: None,
            pids,
            network_off: false,
            privileges: if drops_ptrace {
                privileges::filter()
            } else {
                Vec::new()
            },
            drops_ptrace,
            keep_caps,
            // Sandbox on, and neither wall to be had: the runner's own
            // keeps signals from it.
            walls_signals: drops_ptrace,
            private_tmp: None,
        });
        (c, d)
    }

    /// The task's process bound, for whatever must keep it as long as the
    /// processes that joined it run.
    pub fn pids(&self) -> Option<Arc<pids::PidsCgroup>> {
        self.pids.clone()
    }

    /// Whether the sandbox is on (Landlock, the supervisor, or neither to
    /// be had but asked for): then each command gets the runner's own wall
    /// ([`runner_wall`]), which keeps the runner's limits, scheduling and
    /// terminal from it.
    fn sandboxed(&self) -> bool {
        self.ruleset.is_some() || self.supervisor.is_some() || self.drops_ptrace
    }

    /// Whether Landlock confines writes (and `no_new_privs` holds).
    pub fn confines_writes(&self) -> bool {
        self.ruleset.is_some()
    }

    /// Whether the runner's supervisor decides these commands' connections.
    pub fn supervises(&self) -> bool {
        self.supervisor.is_some()
    }

    /// `program`, ready to start under this confinement (the caller adds
    /// its arguments and the rest): the confinement applied in the child
    /// before `exec`, and, where the supervisor runs, the thread that will
    /// serve the child's listener (tell it the child's id with
    /// [`Watch::spawned`] once started).
    pub fn command(
        self: &Arc<Self>,
        program: &OsStr,
    ) -> std::io::Result<(tokio::process::Command, Option<Watch>)> {
        let watch = match &self.supervisor {
            Some((rules, _)) => Some(Watch::start(rules.clone())?),
            None => None,
        };
        let mut cmd = tokio::process::Command::new(program);
        let channel = watch.as_ref().map_or(-1, |s| s.child_fd());
        let c = self.clone();
        // Written now: the runner's threads as they are when it starts.
        // A foreign ABI's call is the supervisor's to refuse and record,
        // where it runs.
        let foreign = if self.supervisor.is_some() {
            libc::SECCOMP_RET_ALLOW
        } else {
            libc::SECCOMP_RET_ERRNO | libc::EPERM as u32
        };
        let wall = self.sandboxed().then(|| {
            runner_wall::filter(&runner_wall::RunnerIds::now(), self.walls_signals, foreign)
        });
        // SAFETY: `apply_with` makes only system calls (no allocation, no
        // locks), which is what may run between fork and exec.
        unsafe {
            cmd.pre_exec(move || c.apply_with(channel, wall.as_deref()));
        }
        Ok((cmd, watch))
    }

    /// Starts `cmd` (from [`Confinement::command`]) in the task's process
    /// bound: forked by the bound's thread where it has one.
    pub fn spawn(
        &self,
        cmd: &mut tokio::process::Command,
    ) -> std::io::Result<tokio::process::Child> {
        match &self.pids {
            Some(p) => p.spawn(cmd),
            None => cmd.spawn(),
        }
    }

    /// Applies the confinement to the calling process. Only system calls:
    /// safe between `fork` and `exec`. Where the supervisor runs and no
    /// channel to it was prepared, its filter still holds and every
    /// connection fails (closed, not open).
    pub fn apply(&self) -> std::io::Result<()> {
        self.apply_with(-1, None)
    }

    /// [`Confinement::apply`], sending the supervisor's listener on
    /// `supervisor` (from [`Supervised::child_fd`]), and with the runner's
    /// own wall `wall` (from [`runner_wall::filter`]).
    pub fn apply_with(
        &self,
        supervisor: std::os::fd::RawFd,
        wall: Option<&[libc::sock_filter]>,
    ) -> std::io::Result<()> {
        if let Some(pids) = &self.pids {
            pids.join()?;
        }
        self.rlimits.apply()?;
        if let Some(t) = &self.private_tmp {
            // While the capabilities to mount are still there.
            t.enter()?;
        }
        let sandboxed = self.sandboxed();
        if sandboxed {
            // SAFETY: only system calls, in the child.
            unsafe { privileges::drop_capabilities(self.keep_caps)? };
        }
        if self.ruleset.is_none()
            && self.filter.is_empty()
            && self.supervisor.is_none()
            && wall.is_none()
        {
            return Ok(());
        }
        // SAFETY: plain system calls; `filter` outlives the call and the
        // kernel copies the program.
        unsafe {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(fd) = &self.ruleset
                && libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0u32) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            if !self.filter.is_empty() {
                seccomp::install(&self.filter)?;
            }
            match &self.supervisor {
                // Its filter refuses (and records) what `privileges`
                // refuses.
                Some((rules, filter)) if supervisor >= 0 => {
                    supervisor::install_in_child(filter, supervisor, rules.killable_recv)?
                }
                Some((_, filter)) => seccomp::install(filter)?,
                None if sandboxed && !self.privileges.is_empty() => {
                    seccomp::install(&self.privileges)?
                }
                None => {}
            }
            if let Some(program) = wall {
                seccomp::install(program)?;
            }
        }
        Ok(())
    }
}

/// Confines `cmd` (a test's process): writes only in `writable` (and
/// `/dev/null`), no network; the error when the kernel cannot.
#[cfg(feature = "test-tools")]
pub fn confine_std(
    cmd: &mut std::process::Command,
    writable: &[PathBuf],
) -> Result<String, SandboxError> {
    use std::os::unix::process::CommandExt;
    let (c, description) = for_tests(writable)?;
    // SAFETY: `apply` makes only system calls (no allocation, no locks),
    // which is what may run between fork and exec.
    unsafe {
        cmd.pre_exec(move || c.apply());
    }
    Ok(description)
}

/// Confines the calling thread, and every process it starts from then on,
/// as [`confine_std`] confines one command: for a test's thread that
/// starts many. Its children then start by `posix_spawn` (no closure to
/// run between fork and exec), rather than by a `fork` that copies the
/// whole test process's page tables each time, most of the shell
/// differential test's cost in the suite. Landlock, `no_new_privs` and
/// seccomp hold per thread, so the process's other threads stay as they
/// were; this one stays confined until it ends.
#[cfg(feature = "test-tools")]
pub fn confine_thread(writable: &[PathBuf]) -> Result<String, SandboxError> {
    let (c, description) = for_tests(writable)?;
    // Limits and a pids cgroup belong to a process, not a thread: none is
    // asked for here. The supervisor's filter holds without its channel,
    // as in `confine_std` (connections fail, closed).
    debug_assert!(c.rlimits.is_empty() && c.pids.is_none());
    c.apply().map_err(SandboxError::Prepare)?;
    Ok(description)
}

/// What a test's process or thread gets: writes only in `writable`, no
/// network; its description.
#[cfg(feature = "test-tools")]
fn for_tests(writable: &[PathBuf]) -> Result<(Confinement, String), SandboxError> {
    let settings = SandboxSettings {
        mode: SandboxMode::Required,
        network: false,
        ..SandboxSettings::default()
    };
    // No process bound: limits and a cgroup belong to a process, and a
    // test's thread or command is one of the test process's.
    let (c, description) = Confinement::bounded(&settings, writable, None, pids::Bound::default())?;
    let mut c = c.ok_or_else(|| SandboxError::Required(description.clone()))?;
    // No supervisor serves its filter: process groups go as they would.
    if let Some((rules, _)) = c.supervisor.take() {
        let rules = Arc::new(rules.without_groups());
        c.supervisor = Some((rules.clone(), supervisor::filter(&rules)));
    }
    Ok((c, description))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_without_limits_confines_nothing() {
        let s = SandboxSettings {
            mode: SandboxMode::Off,
            ..Default::default()
        };
        let (c, d) = Confinement::new(&s, &[]).unwrap();
        assert!(c.is_none());
        assert_eq!(d, "off");
    }
}
