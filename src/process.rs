//! Running shell commands for the bash tool and for checks.
//!
//! Each command runs in its own process group with stdin closed. Its output is
//! captured with bounded memory (the first and last halves of the cap are
//! kept, the rest is counted), and when the command ends, times out or is
//! cancelled the whole group is killed, so no background job outlives it.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::contain::ConfinedCommand;

/// What to run.
pub struct CommandSpec<'a> {
    pub script: &'a str,
    /// The program and its arguments; empty runs `bash -c SCRIPT`.
    pub argv: &'a [String],
    pub cwd: &'a Path,
    /// The whole environment; `None` inherits the runner's.
    pub env: Option<&'a [(String, String)]>,
    pub timeout: Duration,
    /// Bytes kept of each stream.
    pub max_output_bytes: usize,
    /// Sandbox and limits applied to the command before it starts.
    pub confine: Option<std::sync::Arc<crate::contain::Confinement>>,
    /// What the command reads on stdin (none: /dev/null).
    pub stdin: Option<Vec<u8>>,
}

/// One stream's captured text.
#[derive(Debug, Clone, Default)]
pub struct Captured {
    /// The kept text; when truncated, head and tail joined by a marker.
    pub text: String,
    pub total_bytes: u64,
    pub truncated: bool,
}

/// How a command ended.
#[derive(Debug, Clone)]
pub struct CommandResult {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub stdout: Captured,
    pub stderr: Captured,
    pub duration: Duration,
    /// The programs the supervisor refused to start (policy deny rules).
    pub exec_refusals: Vec<crate::contain::ExecRefusal>,
    /// The calls the sandbox refused with nothing to decide (see
    /// [`crate::contain::RefusedCall`]).
    pub refused_calls: Vec<crate::contain::RefusedCall>,
}

impl CommandResult {
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }
}

/// Kills a process group when dropped (a cancelled or timed-out call, an
/// MCP server at the end of its task), and keeps it in [`LIVE_GROUPS`]
/// until then so that [`kill_all_groups`] can reach it.
///
/// A group id is a number the kernel hands out again once the group is
/// gone: signalling it after its leader was reaped could hit an unrelated
/// group that got the number since. So the group is killed while its leader
/// is still unreaped (a zombie holds its number): [`crate::pidfd::wait_exit`] waits for
/// the leader to end without reaping it (a pidfd, Linux 5.3+), the group is
/// killed, and only then is the leader reaped; after that the guard is
/// [`GroupGuard::retire`]d and never signals again. Where pidfds are
/// missing, the group is killed right after the reap, as before.
pub struct GroupGuard {
    pgid: i32,
    retired: std::sync::atomic::AtomicBool,
}

impl GroupGuard {
    /// Guards the group `pgid` (a child started with `process_group(0)`
    /// has its pid as group id).
    pub fn new(pgid: i32) -> Self {
        if pgid > 0 {
            LIVE_GROUPS
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(pgid);
        }
        Self {
            pgid,
            retired: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Kills the group now, unless retired (it is also killed when dropped).
    pub fn kill(&self) {
        if !self.retired.load(std::sync::atomic::Ordering::Acquire) {
            crate::sys::kill_group(self.pgid);
        }
    }

    /// The group was killed and its leader reaped: its number may belong to
    /// another group from now on, so the guard never signals it again.
    pub fn retire(&self) {
        self.retired
            .store(true, std::sync::atomic::Ordering::Release);
        LIVE_GROUPS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.pgid);
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
        LIVE_GROUPS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.pgid);
    }
}

/// The process groups of commands still running, for [`kill_all_groups`].
static LIVE_GROUPS: std::sync::Mutex<std::collections::BTreeSet<i32>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// Kills every process group a command started and that is still alive:
/// for an exit that cannot wait for the normal teardown (a second signal).
pub fn kill_all_groups() {
    let groups = LIVE_GROUPS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    for pgid in groups {
        crate::sys::kill_group(pgid);
    }
}

/// Reads `r` to its end, keeping at most `cap` bytes (head and tail), or
/// until `stop` is set: what was read by then is kept, with a note (a
/// process the command started still held the pipe open).
async fn read_capped<R: AsyncRead + Unpin>(
    mut r: R,
    cap: usize,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> Captured {
    let half = cap / 2;
    let mut head: Vec<u8> = Vec::with_capacity(half.min(64 * 1024));
    let mut tail: std::collections::VecDeque<u8> = Default::default();
    let mut total: u64 = 0;
    let mut buf = vec![0u8; 64 * 1024];
    let mut stopped = false;
    loop {
        let n = tokio::select! {
            biased;
            _ = stop.wait_for(|s| *s) => {
                stopped = true;
                break;
            }
            read = r.read(&mut buf) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            },
        };
        total += n as u64;
        let mut chunk = &buf[..n];
        if head.len() < half {
            let take = (half - head.len()).min(chunk.len());
            head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        if !chunk.is_empty() {
            let keep = cap - half;
            if chunk.len() >= keep {
                tail.clear();
                tail.extend(&chunk[chunk.len() - keep..]);
            } else {
                let overflow = (tail.len() + chunk.len()).saturating_sub(keep);
                tail.drain(..overflow);
                tail.extend(chunk);
            }
        }
    }
    let kept = head.len() + tail.len();
    let truncated = (kept as u64) < total;
    let text = if truncated {
        let omitted = total - kept as u64;
        format!(
            "{}\n[... {omitted} bytes omitted ...]\n{}",
            String::from_utf8_lossy(&head),
            String::from_utf8_lossy(tail.make_contiguous())
        )
    } else {
        head.extend(tail);
        String::from_utf8_lossy(&head).into_owned()
    };
    let text = if stopped {
        format!(
            "{text}\n[... the output was still open {} s after the command ended (a process it started held it): what came later is not here ...]",
            OUTPUT_GRACE.as_secs()
        )
    } else {
        text
    };
    Captured {
        text,
        total_bytes: total,
        truncated,
    }
}

/// How long a command's output is read for after it ended.
const OUTPUT_GRACE: Duration = Duration::from_secs(2);

/// Runs `bash -c SCRIPT` as described by `spec`.
pub async fn run_shell(spec: CommandSpec<'_>) -> std::io::Result<CommandResult> {
    let start = Instant::now();
    let mut confined = match spec.argv.split_first() {
        Some((program, args)) => {
            let mut c = ConfinedCommand::new(spec.confine.as_ref(), program)?;
            c.cmd.args(args);
            c
        }
        None => {
            let mut c = ConfinedCommand::new(spec.confine.as_ref(), "bash")?;
            c.cmd.arg("-c").arg(spec.script);
            c
        }
    };
    let cmd = &mut confined.cmd;
    cmd.current_dir(spec.cwd)
        .stdin(if spec.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    crate::sys::own_group(cmd);
    if let Some(env) = spec.env {
        cmd.env_clear();
        cmd.envs(env.iter().map(|(k, v)| (k, v)));
    }
    // The span that starts it, when the run exports telemetry.
    cmd.envs(crate::telemetry::context::propagation_env());
    let spawned = confined.spawn();
    let mut child = spawned?;
    let guard = GroupGuard::new(child.id().map(|p| p as i32).unwrap_or(0));
    let pidfd = child.id().and_then(crate::pidfd::pidfd_open);
    if let (Some(bytes), Some(mut pipe)) = (spec.stdin, child.stdin.take()) {
        // Written on the side: a command that does not read its input
        // must not block the runner; dropping the pipe closes it.
        tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let _ = pipe.write_all(&bytes).await;
        });
    }
    let out = child.stdout.take().expect("piped");
    let err = child.stderr.take().expect("piped");
    let cap = spec.max_output_bytes.max(2);
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let out_task = tokio::spawn(read_capped(out, cap, stopped.clone()));
    let err_task = tokio::spawn(read_capped(err, cap, stopped));

    // The shell is done (or out of time): end whatever it left running so
    // that the pipes close, while the shell is still unreaped.
    let ended = async {
        match pidfd {
            Some(fd) => crate::pidfd::wait_exit(fd).await,
            None => {
                let _ = child.wait().await;
            }
        }
    };
    let timed_out = tokio::select! {
        _ = ended => false,
        _ = tokio::time::sleep(spec.timeout) => true,
    };
    guard.kill();
    // And what left its group (`setsid`, a daemon), where the supervisor
    // saw it go.
    confined.end_escapes();
    let status = child.wait().await.ok();
    guard.retire();
    // What holds the pipes open past the grace (a process that left the
    // group, where nothing ended it) is not waited for; what was read is
    // kept.
    let grace = tokio::spawn(async move {
        tokio::time::sleep(OUTPUT_GRACE).await;
        let _ = stop.send(true);
    });
    let stdout = out_task.await.unwrap_or_default();
    let stderr = err_task.await.unwrap_or_default();
    grace.abort();
    let exec_refusals = confined.exec_refusals();
    let refused_calls = confined.refused_calls();
    Ok(CommandResult {
        exec_refusals,
        refused_calls,
        exit_code: if timed_out {
            None
        } else {
            status.and_then(|s| s.code())
        },
        signal: status.and_then(crate::sys::exit_signal),
        timed_out,
        stdout,
        stderr,
        duration: start.elapsed(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `script` run as it is (no sandbox) in a temporary folder, its
    /// output capped at 1,000 bytes; the folder, kept while the test
    /// looks at it.
    async fn unconfined(script: &str, timeout: Duration) -> (tempfile::TempDir, CommandResult) {
        let dir = tempfile::tempdir().unwrap();
        let r = run_shell(CommandSpec {
            argv: &[],
            script,
            cwd: dir.path(),
            env: None,
            timeout,
            max_output_bytes: 1000,
            confine: None,
            stdin: None,
        })
        .await
        .unwrap();
        (dir, r)
    }

    #[tokio::test]
    async fn caps_output_and_counts_the_rest() {
        let (_dir, r) = unconfined(
            "head -c 100000 /dev/zero | tr '\\0' a; echo err >&2; exit 3",
            Duration::from_secs(10),
        )
        .await;
        assert_eq!(r.exit_code, Some(3));
        assert!(r.stdout.truncated);
        assert_eq!(r.stdout.total_bytes, 100000);
        assert!(r.stdout.text.contains("99000 bytes omitted"));
        assert_eq!(r.stderr.text, "err\n");
    }

    /// A process that left the group and holds the output open (nothing
    /// ends it here: no supervisor) costs the grace, not the output.
    #[tokio::test]
    async fn output_held_open_past_the_grace_is_kept() {
        let (_dir, r) = unconfined(
            // It waits until the sleeper has left its group (the file
            // is written after), or the group kill would end it first.
            "echo before; setsid sh -c 'echo x > f; exec sleep 4.37' & until [ -s f ]; do sleep 0.05; done; echo after",
            Duration::from_secs(10),
        )
        .await;
        let _ = std::process::Command::new("pkill")
            .args(["-f", "^sleep 4.37$"])
            .status();
        assert_eq!(r.exit_code, Some(0));
        assert!(
            r.stdout.text.starts_with("before\nafter\n"),
            "{}",
            r.stdout.text
        );
        assert!(
            r.stdout.text.contains("still open 2 s after"),
            "{}",
            r.stdout.text
        );
        assert!(r.duration < Duration::from_secs(4), "{:?}", r.duration);
    }

    #[tokio::test]
    async fn timeout_kills_the_group() {
        let (dir, r) = unconfined(
            "(sleep 2; touch survived) & sleep 30",
            Duration::from_millis(300),
        )
        .await;
        let marker = dir.path().join("survived");
        assert!(r.timed_out);
        assert!(r.duration < Duration::from_secs(5));
        tokio::time::sleep(Duration::from_millis(2500)).await;
        assert!(!marker.exists(), "a background job outlived the timeout");
    }

    #[tokio::test]
    async fn a_jobs_group_dies_with_its_shell_and_a_retired_guard_never_signals() {
        // The shell exits at once, leaving a background job: the job is
        // killed (before the shell is reaped, where pidfds exist).
        let (dir, r) = unconfined(
            "(sleep 1; touch survived) & exit 0",
            Duration::from_secs(30),
        )
        .await;
        let marker = dir.path().join("survived");
        assert_eq!(r.exit_code, Some(0));
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert!(!marker.exists(), "a background job outlived its shell");

        // A retired guard leaves the group alone, even when dropped.
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let guard = GroupGuard::new(child.id() as i32);
        guard.retire();
        guard.kill();
        drop(guard);
        std::thread::sleep(Duration::from_millis(100));
        assert!(
            child.try_wait().unwrap().is_none(),
            "a retired guard killed its group"
        );
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            crate::pidfd::pidfd_open(std::process::id()).is_some(),
            "no pidfd on this kernel"
        );
    }
}
