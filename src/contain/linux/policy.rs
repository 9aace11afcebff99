//! What a task's policy adds to its confinement: the record of refused
//! connections, and the exec wall where the policy denies programs.

use std::sync::Arc;

use super::exec_guard::ExecGuard;
use super::{Confinement, describe, supervisor};

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
}
