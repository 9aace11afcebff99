//! What a task's policy adds to its confinement: the record of refused
//! connections, the exec wall where the policy denies programs, and a
//! private `/tmp` where the task asks for one.

use std::sync::Arc;

use super::exec_guard::ExecGuard;
use std::path::Path;

use super::{Confinement, describe, private_tmp, supervisor};

impl Confinement {
    /// Whether the supervisor decides these commands' execs against the
    /// policy's program denies, each again where the kernel commits it
    /// (without that second look the first can be raced, and the exec
    /// backstop is not held).
    pub fn supervises_exec(&self) -> bool {
        self.supervisor
            .as_ref()
            .is_some_and(|(rules, _)| rules.exec.is_some() && rules.follows)
    }

    /// The same confinement, recording the connections the supervisor
    /// refuses in `log` (the task's, for its transcript).
    pub fn with_net_log(mut self, log: Arc<crate::net::NetLog>) -> Self {
        if let Some((rules, filter)) = self.supervisor.take() {
            self.supervisor = Some((Arc::new(rules.with_log(log)), filter));
        }
        self
    }

    /// The same confinement, with the supervisor deciding execs against
    /// `policy`'s program denies (where it runs), the programs looked up
    /// on `path` (the commands' `PATH`). Deny rules with a wall already
    /// (`no_new_privs` under Landlock, the network switch) cost the execs
    /// nothing.
    pub fn with_policy(self, policy: &Arc<runner_policy::PolicySet>, path: Option<&str>) -> Self {
        if !self.supervises() {
            return self;
        }
        // Without Landlock nothing else walls in writes or privileges: the
        // guard then decides those programs' execs too.
        let walls = runner_policy::Backstops {
            confined: self.confines_writes(),
            network_off: self.network_off,
            ..Default::default()
        };
        match ExecGuard::new(policy.clone(), path, walls) {
            Some(g) => self.with_exec(Arc::new(g)),
            None => self,
        }
    }

    /// The same confinement, with the supervisor deciding execs with
    /// `guard` too (where the supervisor runs).
    fn with_exec(mut self, guard: Arc<ExecGuard>) -> Self {
        if let Some((rules, _)) = &self.supervisor {
            let rules = Arc::new(rules.with_exec(guard));
            let filter = supervisor::filter(&rules);
            self.description
                .push_str(&match supervisor::follow::available() {
                    Ok(()) => describe::EXECS_FOLLOWED.to_string(),
                    Err(why) => format!("{}{why}", describe::EXECS_NOT_FOLLOWED),
                });
            self.supervisor = Some((rules, filter));
        }
        self
    }

    /// The same confinement, with commands given a private `/tmp` and
    /// `/var/tmp` in folders made beneath `base` (which commands may
    /// write), `keeps` (each path, and what commands get of it)
    /// bound back at their places. Only where Landlock confines writes
    /// (elsewhere the machine's `/tmp` is as writable as a private one)
    /// and the machine allows a mount namespace ([`private_tmp::available`]).
    pub fn with_private_tmp(mut self, base: &Path, keeps: &[private_tmp::Keep]) -> Self {
        if !self.confines_writes() {
            return self;
        }
        let mode = match private_tmp::available() {
            Ok(m) => m,
            Err(why) => {
                tracing::debug!("no private /tmp: {why}");
                return self;
            }
        };
        let t = match private_tmp::PrivateTmp::prepare(mode, base, keeps) {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!("no private /tmp: {e}");
                return self;
            }
        };
        if let Some((rules, filter)) = self.supervisor.take() {
            self.supervisor = Some((Arc::new(rules.with_tmp(t.view.clone())), filter));
        }
        self.description
            .push_str("; commands have a /tmp and /var/tmp of their own");
        self.private_tmp = Some(t);
        self
    }

    /// Whether commands have a private `/tmp`.
    pub fn has_private_tmp(&self) -> bool {
        self.private_tmp.is_some()
    }
}
