//! The default bound on a task's processes where no pids cgroup is asked
//! for or to be had: `RLIMIT_NPROC`, set in each command before `exec`.
//!
//! The kernel holds a fork to it against every process and thread of the
//! command's real user, not of the task, so the limit is the machine's
//! task count when the task's sandbox is made (`/proc/loadavg`'s total,
//! which the user's own count cannot exceed) plus the bound. A fork bomb
//! then fails to fork after at most that many more, and the runner, whose
//! own limit is untouched, goes on. It costs one `setrlimit` a command.
//! Root is never held to it (the kernel exempts the initial user
//! namespace's root), so there it is no bound: the transcript says so, and
//! `limits: {processes: N}` asks for a pids cgroup instead.

/// Processes and threads a task's commands may add to what the machine
/// had, by default: far above what a build starts (a `cargo build` or a
/// Gradle daemon: tens to a few hundred threads), far below what takes a
/// CI machine down.
pub const DEFAULT_MORE: u64 = 1024;

/// The limit for this user: the machine's `tasks` and `more`, never above
/// the limit the runner already has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserLimit {
    pub limit: u64,
    pub tasks: u64,
}

/// Why `RLIMIT_NPROC` bounds nothing here (said in the transcript).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum NoUserLimit {
    #[error("root is not held to RLIMIT_NPROC")]
    Root,
    #[error("/proc/loadavg has no task count")]
    NoCount,
}

/// The limit that lets this user's commands have at most `more` processes
/// and threads beyond the machine's current count.
pub fn user_limit(more: u64) -> Result<UserLimit, NoUserLimit> {
    // SAFETY: getuid cannot fail.
    if unsafe { libc::getuid() } == 0 {
        return Err(NoUserLimit::Root);
    }
    let loadavg = std::fs::read_to_string("/proc/loadavg").map_err(|_| NoUserLimit::NoCount)?;
    let tasks = tasks_in(&loadavg).ok_or(NoUserLimit::NoCount)?;
    let mut now = libc::rlimit {
        rlim_cur: libc::RLIM_INFINITY,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: a plain system call on a stack value.
    unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut now) };
    Ok(UserLimit {
        limit: tasks
            .saturating_add(more)
            .min(now.rlim_cur)
            .min(now.rlim_max),
        tasks,
    })
}

/// The total of `/proc/loadavg`'s fourth field (`running/total`): every
/// process and thread on the machine.
fn tasks_in(loadavg: &str) -> Option<u64> {
    let field = loadavg.split_whitespace().nth(3)?;
    field.split_once('/')?.1.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machines_task_count_is_loadavgs_total() {
        assert_eq!(tasks_in("0.52 0.58 0.59 3/467 12345\n"), Some(467));
        assert_eq!(tasks_in("0.52 0.58 0.59 467 12345\n"), None);
        assert_eq!(tasks_in("0.52 0.58\n"), None);
        assert_eq!(tasks_in("0.52 0.58 0.59 3/x 1\n"), None);
    }

    /// Root: no limit; another user: the machine's count and more, at
    /// most what the runner has.
    #[test]
    fn the_limit_is_the_machines_count_and_more_for_a_user_other_than_root() {
        // SAFETY: getuid cannot fail.
        if unsafe { libc::getuid() } == 0 {
            assert_eq!(user_limit(10), Err(NoUserLimit::Root));
            return;
        }
        let l = user_limit(10).unwrap();
        assert!(l.tasks > 0);
        assert!(l.limit <= l.tasks + 10);
    }
}
