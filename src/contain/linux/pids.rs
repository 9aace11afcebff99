//! A bound on how many processes a task's commands may have at once, so a
//! fork bomb in a command (`:(){ :|:& };:`) stays bounded and the runner,
//! the machine and the other tasks go on.
//!
//! The bound a task asks for is a pids cgroup of its own, a child of the runner's
//! cgroup, whose `pids.max` the kernel holds every fork and clone to (a
//! command over it gets `EAGAIN`, as bash reports: "fork: retry: Resource
//! temporarily unavailable"). Each command joins it between fork and exec.
//! It works where the runner may create a child cgroup: cgroup v1's pids
//! hierarchy when writable (a container's root, as on this machine), or a
//! cgroup v2 subtree delegated to the runner with the pids controller
//! enabled. Where neither cgroup is open to the runner, and by default,
//! the bound is `RLIMIT_NPROC` ([`super::nproc`]), which counts every
//! process of the user rather than the task's and which root ignores; the
//! transcript's `sandbox` says which bound holds, or why none does.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::nproc;
use super::spawner::{self, Spawner};

/// A task's bound on its commands' processes, and what the transcript's
/// `sandbox` says of it.
#[derive(Debug, Default)]
pub struct Bound {
    /// The pids cgroup each command joins.
    pub cgroup: Option<std::sync::Arc<PidsCgroup>>,
    /// Else `RLIMIT_NPROC`, set in each command (see [`super::nproc`]).
    pub nproc: Option<u64>,
    pub note: String,
}

/// The bound: a pids cgroup when the task asked for one
/// (`limits: {processes: N}`) and the machine allows it; else, for a user
/// other than root, `RLIMIT_NPROC` at N (or [`nproc::DEFAULT_MORE`])
/// beyond the machine's task count; for root, whom `RLIMIT_NPROC` does
/// not hold, a pids cgroup of [`nproc::DEFAULT_MORE`] where its commands
/// can start in it without joining it ([`super::spawner`]: cgroup v1).
/// Joining costs an RCU grace period a command (1 to 14 ms on this
/// project's machines), which every bash call would pay: a default never
/// does; spawning straight into a cgroup v2 (`clone3` with
/// `CLONE_INTO_CGROUP`) would cost nothing and could make it one there.
pub fn bound(processes: Option<u64>) -> Bound {
    let cgroup = |max: u64, joins: Joins, how: &str| -> Result<Bound, NoCgroup> {
        Ok(Bound {
            cgroup: Some(std::sync::Arc::new(PidsCgroup::create(max, joins)?)),
            nproc: None,
            note: format!("; processes: at most {max} (pids cgroup{how})"),
        })
    };
    let no_cgroup = match processes {
        Some(max) => match cgroup(max, Joins::Allowed, "") {
            Ok(b) => return b,
            Err(why) => Some(why),
        },
        None => None,
    };
    let more = processes.unwrap_or(nproc::DEFAULT_MORE);
    match (nproc::user_limit(more), no_cgroup) {
        (Ok(l), no_cgroup) => Bound {
            cgroup: None,
            nproc: Some(l.limit),
            note: format!(
                "; processes: this user's at most {} (RLIMIT_NPROC{}: the machine's {} and {more} more{})",
                l.limit,
                if no_cgroup.is_none() {
                    ", the default"
                } else {
                    ""
                },
                l.tasks,
                no_cgroup
                    .map(|why| format!("; no pids cgroup: {why}"))
                    .unwrap_or_default()
            ),
        },
        (Err(no), Some(why)) => Bound {
            note: format!("; processes: not bounded ({why}; {no})"),
            ..Bound::default()
        },
        (Err(no), None) => match cgroup(more, Joins::Refused, ", the default") {
            Ok(b) => b,
            Err(why) => Bound {
                note: format!(
                    "; processes: not bounded by default ({no}; no pids cgroup without a cost a command: {why}; limits: {{processes: N}} asks for one)"
                ),
                ..Bound::default()
            },
        },
    }
}

/// Whether a cgroup may be one that each command joins between fork and
/// exec (an RCU grace period a command), where no thread can fork into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Joins {
    /// The task asked for the bound: it pays that.
    Allowed,
    /// A default: only a cgroup that commands start in.
    Refused,
}

/// Why a task can have no pids cgroup here (said in the transcript).
#[derive(Debug, thiserror::Error)]
pub enum NoCgroup {
    #[error("/proc/self/cgroup: {0}")]
    Unreadable(std::io::Error),
    #[error("no pids cgroup hierarchy is mounted")]
    NoHierarchy,
    #[error("cannot create a cgroup in {}: {source}", parent.display())]
    Create {
        parent: PathBuf,
        source: std::io::Error,
    },
    #[error("a cgroup path with a NUL byte")]
    NulInPath,
    #[error("{} moves only whole processes (cgroup v2)", parent.display())]
    WholeProcesses { parent: PathBuf },
    #[error("cannot start the thread that forks into it: {0}")]
    NoSpawner(std::io::Error),
    #[error("the pids controller is not enabled for {}: {source}", dir.display())]
    NoController {
        dir: PathBuf,
        source: std::io::Error,
    },
}

/// A task's pids cgroup; when dropped, what is left in it is killed and it
/// is removed.
#[derive(Debug)]
pub struct PidsCgroup {
    dir: PathBuf,
    /// `cgroup.procs` of `dir`, ready for [`PidsCgroup::join`] (no
    /// allocation between fork and exec).
    procs: CString,
    /// This cgroup among the process's (never 0).
    id: u64,
    /// The thread that forks the commands inside it (cgroup v1).
    spawner: Option<Spawner>,
}

impl PidsCgroup {
    /// A new pids cgroup of at most `max` processes beneath the runner's
    /// own, with a thread that forks commands inside it where the
    /// hierarchy moves threads (cgroup v1); else, when `joins` allows,
    /// one that each command joins. Or why there can be none.
    pub fn create(max: u64, joins: Joins) -> Result<Self, NoCgroup> {
        let own = std::fs::read_to_string("/proc/self/cgroup").map_err(NoCgroup::Unreadable)?;
        let parent = parent_dir(&own).ok_or(NoCgroup::NoHierarchy)?;
        let per_thread = parent.join("tasks").exists();
        if !per_thread && joins == Joins::Refused {
            return Err(NoCgroup::WholeProcesses { parent });
        }
        static SEQ: AtomicU64 = AtomicU64::new(1);
        let id = SEQ.fetch_add(1, Ordering::Relaxed);
        let name = format!("runner-{}-{id}", std::process::id());
        sweep(&parent);
        let dir = parent.join(name);
        std::fs::create_dir(&dir).map_err(|source| NoCgroup::Create {
            parent: parent.clone(),
            source,
        })?;
        let mut made = Self {
            procs: CString::new(dir.join("cgroup.procs").as_os_str().as_encoded_bytes())
                .map_err(|_| NoCgroup::NulInPath)?,
            dir,
            id,
            spawner: None,
        };
        // The spawner thread is one of the cgroup's tasks.
        let max = max.saturating_add(u64::from(per_thread));
        std::fs::write(made.dir.join("pids.max"), max.to_string()).map_err(|source| {
            NoCgroup::NoController {
                dir: made.dir.clone(),
                source,
            }
        })?;
        LIVE.insert(&made.dir);
        if per_thread {
            match Spawner::start(made.dir.join("tasks"), id) {
                Ok(s) => made.spawner = Some(s),
                Err(e) if joins == Joins::Refused => return Err(NoCgroup::NoSpawner(e)),
                Err(_) => {}
            }
        }
        Ok(made)
    }

    /// Starts `cmd` in the cgroup: forked by the cgroup's thread where it
    /// has one, else started as it is (it joins between fork and exec).
    /// A cgroup at its bound refuses the thread's fork (what a fork bomb
    /// left, in groups of its own, until the task ends): the command is
    /// then forked outside and joins, which the bound does not refuse, so
    /// it runs as it would have, its own forks refused.
    pub fn spawn(
        &self,
        cmd: &mut tokio::process::Command,
    ) -> std::io::Result<tokio::process::Child> {
        match &self.spawner {
            Some(s) => match s.spawn(cmd) {
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => cmd.spawn(),
                spawned => spawned,
            },
            None => cmd.spawn(),
        }
    }

    /// Moves the calling process into the cgroup. Only system calls: safe
    /// between `fork` and `exec`.
    pub fn join(&self) -> std::io::Result<()> {
        if spawner::forks_into(self.id) {
            return Ok(());
        }
        let mut digits = [0u8; 20];
        let mut n = std::process::id();
        let mut at = digits.len();
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        // SAFETY: plain system calls on a NUL-terminated path and a stack
        // buffer.
        unsafe {
            let fd = libc::open(self.procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let wrote = libc::write(fd, digits[at..].as_ptr().cast(), digits.len() - at);
            let err = std::io::Error::last_os_error();
            libc::close(fd);
            if wrote < 0 {
                return Err(err);
            }
        }
        Ok(())
    }
}

impl Drop for PidsCgroup {
    /// Kills whatever of the task is left in the cgroup (a fork bomb's
    /// processes forked after their group was killed, a daemon a command
    /// started in a session of its own), then removes it.
    fn drop(&mut self) {
        // The thread ends first: it leaves the cgroup as it does.
        self.spawner.take();
        LIVE.remove(&self.dir);
        if !empty_and_remove(&self.dir, 120, false) {
            tracing::warn!(
                "cgroup {} left behind: its processes did not die",
                self.dir.display()
            );
        }
    }
}

/// The cgroups of tasks still running, for [`remove_all`].
static LIVE: crate::cleanup::LiveSet = crate::cleanup::LiveSet::new();

/// Empties and removes every task's cgroup: for an exit that does not wait
/// for the tasks (a second SIGINT/SIGTERM).
pub fn remove_all() {
    for d in LIVE.paths() {
        empty_and_remove(&d, 30, true);
    }
}

/// Kills what is in the cgroup `dir` and removes it, trying `rounds` times
/// with a wait that doubles from 50 µs (a process just reaped leaves its
/// cgroup a moment later: the first retries are what an ordinary command
/// needs); whether it is gone. The runner's own process is never
/// signalled: its spawner thread may be in the cgroup, and a `hurried`
/// exit, whose threads live on to the end, stops when only it is left.
/// Bounded: the cgroup holds at most its
/// `pids.max`, and each round kills them all.
fn empty_and_remove(dir: &Path, rounds: usize, hurried: bool) -> bool {
    let mut wait = std::time::Duration::from_micros(50);
    for _ in 0..rounds {
        if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
            return true;
        }
        let pids = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
        let own = std::process::id() as i32;
        let pids: Vec<i32> = pids
            .lines()
            .filter_map(|l| l.trim().parse::<i32>().ok())
            .filter(|&p| p != own)
            .collect();
        if hurried && pids.is_empty() {
            // Only the runner's own spawner thread is left, which lives
            // until the exit: a later runner sweeps the folder.
            return false;
        }
        for pid in pids {
            // SAFETY: a signal to a process of this task's cgroup.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(wait);
        wait = (wait * 2).min(std::time::Duration::from_millis(20));
    }
    false
}

/// Removes the empty cgroups of runners that are gone (killed with
/// SIGKILL, which no cleanup outlives): `runner-PID-N` whose PID is no
/// process. A cgroup with processes left cannot be removed and stays.
fn sweep(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("runner-"))
            .and_then(|n| n.split('-').next())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

/// The folder where the runner may make its child pids cgroup, from
/// `/proc/self/cgroup`: the v1 pids hierarchy, or the v2 one.
fn parent_dir(own: &str) -> Option<PathBuf> {
    parent_dir_in(Path::new("/sys/fs/cgroup"), own)
}

/// [`parent_dir`] with the cgroup file systems mounted at `root`.
fn parent_dir_in(root: &Path, own: &str) -> Option<PathBuf> {
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        if controllers.split(',').any(|c| c == "pids") {
            let dir = root.join("pids").join(path.trim_start_matches('/'));
            if dir.join("pids.max").exists() || dir.join("cgroup.procs").exists() {
                return Some(dir);
            }
        }
    }
    // cgroup v2: the runner's own cgroup, where pids is a controller its
    // children may have.
    let path = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = root.join(path.trim_start_matches('/'));
    let enabled = std::fs::read_to_string(dir.join("cgroup.subtree_control")).ok()?;
    enabled
        .split_whitespace()
        .any(|c| c == "pids")
        .then_some(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The v1 pids hierarchy is the runner's own folder in it; a v2
    /// cgroup only where its children may have the pids controller.
    #[test]
    fn the_hierarchy_is_found_in_proc_self_cgroup() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        let v1 = r.join("pids/docker/abc");
        std::fs::create_dir_all(&v1).unwrap();
        std::fs::write(v1.join("pids.max"), "max\n").unwrap();
        let own = "12:pids:/docker/abc\n0::/\n";
        assert_eq!(parent_dir_in(r, own), Some(v1));
        // No pids line, or a pids line whose folder is not there.
        assert_eq!(parent_dir_in(r, "1:cpu:/x\n"), None);
        assert_eq!(parent_dir_in(r, "3:pids:/elsewhere\n"), None);
        // v2: the runner's cgroup, once `pids` is in its subtree_control.
        let v2 = r.join("system.slice/runner.service");
        std::fs::create_dir_all(&v2).unwrap();
        let own = "0::/system.slice/runner.service\n";
        std::fs::write(v2.join("cgroup.subtree_control"), "cpu memory\n").unwrap();
        assert_eq!(parent_dir_in(r, own), None);
        std::fs::write(v2.join("cgroup.subtree_control"), "cpu pids\n").unwrap();
        assert_eq!(parent_dir_in(r, own), Some(v2));
    }

    /// Where this machine lets the runner make one, a cgroup bounds the
    /// processes of what joins it, and is removed when dropped.
    #[test]
    fn a_cgroup_bounds_forks_where_the_machine_allows_one() {
        let Ok(cg) = PidsCgroup::create(8, Joins::Allowed) else {
            eprintln!("no pids cgroup here: nothing to check");
            return;
        };
        let dir = cg.dir.clone();
        let mut cmd = std::process::Command::new("/bin/sh");
        cmd.arg("-c")
            .arg("for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 1 & done; wait; echo done")
            .stderr(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let cg = std::sync::Arc::new(cg);
        let joined = cg.clone();
        // SAFETY: `join` only makes system calls.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || joined.join());
        }
        let o = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("fork") || err.contains("Resource temporarily unavailable"),
            "{err}"
        );
        drop(cmd);
        drop(cg);
        assert!(!dir.exists(), "{} left behind", dir.display());
    }

    /// Where the hierarchy moves threads (cgroup v1), a command starts in
    /// the cgroup, forked by its thread, without joining it; the runner's
    /// own process stays outside, and is not signalled when the cgroup is
    /// emptied, in a hurry (its thread still inside) or when dropped.
    #[test]
    fn commands_start_in_the_cgroup_forked_by_its_thread() {
        let cg = match PidsCgroup::create(8, Joins::Refused) {
            Ok(cg) => cg,
            Err(why) => {
                eprintln!("no per-thread pids cgroup here ({why}): nothing to check");
                return;
            }
        };
        assert!(cg.spawner.is_some());
        assert!(
            !spawner::forks_into(cg.id),
            "the test's thread is not in it"
        );
        let name = cg.dir.file_name().unwrap().to_str().unwrap().to_string();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let out = rt.block_on(async {
            let mut cmd = tokio::process::Command::new("/bin/sh");
            cmd.arg("-c")
                .arg("grep pids: /proc/self/cgroup")
                .stdout(std::process::Stdio::piped());
            let child = cg.spawn(&mut cmd).unwrap();
            // The command came back to the caller, whole.
            assert_eq!(cmd.as_std().get_program(), "/bin/sh");
            child.wait_with_output().await.unwrap()
        });
        let line = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(line.trim_end().ends_with(&format!("/{name}")), "{line}");
        let own = std::fs::read_to_string("/proc/self/cgroup").unwrap();
        assert!(!own.contains(&name), "{own}");
        assert_eq!(
            std::fs::read_to_string(cg.dir.join("pids.max"))
                .unwrap()
                .trim(),
            "9"
        );
        // The thread is still inside: a hurried exit gives up at once,
        // leaving the runner alive (this test goes on).
        assert!(!empty_and_remove(&cg.dir, 30, true));
        let dir = cg.dir.clone();
        drop(cg);
        assert!(!dir.exists(), "{} left behind", dir.display());
    }

    /// A cgroup left by a runner killed with SIGKILL (its PID no process)
    /// is removed when the next one is made; a live runner's is not.
    #[test]
    fn cgroups_of_runners_that_are_gone_are_swept() {
        let Ok(first) = PidsCgroup::create(8, Joins::Allowed) else {
            eprintln!("no pids cgroup here: nothing to check");
            return;
        };
        let parent = first.dir.parent().unwrap().to_path_buf();
        // PIDs above the kernel's maximum (4,194,304) are never processes.
        let stale = parent.join("runner-4999999-0");
        std::fs::create_dir(&stale).unwrap();
        let live = first.dir.clone();
        let second = PidsCgroup::create(8, Joins::Allowed).unwrap();
        assert!(!stale.exists(), "{} not swept", stale.display());
        assert!(live.exists());
        drop(first);
        drop(second);
        assert!(!live.exists());
    }
}
