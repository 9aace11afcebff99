//! A thread of the runner that lives in a task's pids cgroup (cgroup v1)
//! and forks the task's commands, so that each command starts inside the
//! cgroup without joining it.
//!
//! Joining a cgroup moves a process between `fork` and `exec`, and the
//! kernel makes every move wait for an RCU grace period (1 to 14 ms a
//! command on this project's machines, measured with strace): too dear
//! for every bash call, which is why a cgroup used to be only a bound a
//! task asked for. A forked child starts in the cgroup of the *thread*
//! that forked it, and cgroup v1 moves single threads (`tasks`): so one
//! thread moves once per task, paying the wait once, off the first
//! request's path (the thread moves itself when it starts), and every
//! command it forks is in the cgroup from its first instruction. cgroup
//! v2 moves only whole processes (outside its threaded mode); there a
//! command still joins between fork and exec (see [`super::pids`]).
//!
//! The thread counts as one of the cgroup's tasks; [`super::pids`] adds
//! it to `pids.max`, and never signals the runner's own process when it
//! empties the cgroup.

use std::cell::Cell;
use std::path::PathBuf;
use std::sync::mpsc;

thread_local! {
    /// The pids cgroup this thread forks into ([`super::pids::PidsCgroup`]'s
    /// id; 0: none). A child forked by this thread reads its copy between
    /// fork and exec (a plain load: no allocation, no lock) to know it
    /// need not join.
    static FORKS_INTO: Cell<u64> = const { Cell::new(0) };
}

/// Whether the calling thread (or, between fork and exec, the thread
/// that forked this child) is in the cgroup with id `id`.
pub fn forks_into(id: u64) -> bool {
    id != 0 && FORKS_INTO.with(Cell::get) == id
}

type Job = Box<dyn FnOnce() + Send>;

/// The thread and the queue of spawns it serves; when dropped, the queue
/// closes and the thread ends, which takes it out of the cgroup.
#[derive(Debug)]
pub struct Spawner {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Spawner {
    /// Starts the thread, which first moves itself into the cgroup v1
    /// whose `tasks` file is `tasks` (id `id`). Where the move fails, it
    /// still spawns, and each command joins as it would without it.
    pub fn start(tasks: PathBuf, id: u64) -> std::io::Result<Self> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let thread = std::thread::Builder::new()
            .name("runner-spawner".into())
            .spawn(move || {
                // SAFETY: gettid cannot fail.
                let tid = unsafe { libc::gettid() };
                match std::fs::write(&tasks, tid.to_string()) {
                    Ok(()) => FORKS_INTO.with(|f| f.set(id)),
                    Err(e) => tracing::debug!(
                        "{}: {e}; each command joins its cgroup itself",
                        tasks.display()
                    ),
                }
                for job in queue {
                    job();
                }
            })?;
        Ok(Self {
            jobs: Some(jobs),
            thread: Some(thread),
        })
    }

    /// Spawns `cmd` from the thread (in the caller's tokio runtime, which
    /// then reaps the child as it would have). Blocks as long as the
    /// spawn, and, for a task's first command, until the thread is in its
    /// cgroup.
    pub fn spawn(
        &self,
        cmd: &mut tokio::process::Command,
    ) -> std::io::Result<tokio::process::Child> {
        let (Some(jobs), Ok(rt)) = (&self.jobs, tokio::runtime::Handle::try_current()) else {
            return cmd.spawn();
        };
        let taken = std::mem::replace(cmd, tokio::process::Command::new(""));
        let (back, answer) = mpsc::sync_channel(1);
        let job: Job = Box::new(move || {
            let _in = rt.enter();
            let mut cmd = taken;
            let spawned = cmd.spawn();
            let _ = back.send((cmd, spawned));
        });
        if jobs.send(job).is_err() {
            return Err(gone());
        }
        let (returned, spawned) = answer.recv().map_err(|_| gone())?;
        *cmd = returned;
        spawned
    }
}

fn gone() -> std::io::Error {
    std::io::Error::other("the task's spawner thread is gone")
}

impl Drop for Spawner {
    fn drop(&mut self) {
        self.jobs.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The thread knows the cgroup it moved into (here a plain file stands
    /// for its `tasks`); no other thread does, and id 0 is no cgroup.
    #[test]
    fn only_the_thread_that_moved_forks_into_its_cgroup() {
        let dir = tempfile::tempdir().unwrap();
        let tasks = dir.path().join("tasks");
        let s = Spawner::start(tasks.clone(), 7).unwrap();
        let (tx, rx) = mpsc::channel();
        let job: Job = Box::new(move || {
            tx.send((forks_into(7), forks_into(8), forks_into(0)))
                .unwrap();
        });
        s.jobs.as_ref().unwrap().send(job).unwrap();
        assert_eq!(rx.recv().unwrap(), (true, false, false));
        assert!(!forks_into(7), "the test's thread moved nowhere");
        // It wrote its own thread id.
        let tid: i32 = std::fs::read_to_string(&tasks).unwrap().parse().unwrap();
        assert!(tid > 0);
        drop(s);
    }
}
