//! The supervisor's exec decision: the path and `argv[0]` read from the
//! stopped process (and, when they name a program a rule denies, the whole
//! argv and its folder, and for cargo and gh their environment), decided
//! by the [`ExecGuard`]; a refusal recorded for the spawn before the
//! process hears of it.

use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;
use std::sync::Mutex;

use super::connect::still_valid;
use super::exe_path::{file_as_process_sees, named};
use super::memory::{read_argv, read_cstring};
use super::rules::Answer;
use crate::contain::os::exec_guard::{ExecGuard, ExecRefusal};

/// Decides one `execve`/`execveat` against the policy's program denies.
/// `spawning`: no call the runner could read has come yet (see below);
/// set to false by the first one.
pub(super) fn decide_exec(
    req: &libc::seccomp_notif,
    listener: &OwnedFd,
    guard: &ExecGuard,
    refusals: &Mutex<Vec<ExecRefusal>>,
    spawning: &mut bool,
) -> Answer {
    let at = i64::from(req.data.nr) == libc::SYS_execveat;
    let args = &req.data.args;
    let (dirfd, path_ptr, argv_ptr, envp_ptr, flags) = if at {
        (args[0] as i32, args[1], args[2], args[3], args[4] as i32)
    } else {
        (libc::AT_FDCWD, args[0], args[1], args[2], 0)
    };
    // What cannot be read is refused: the wall holds or the call fails.
    // First the path and argv[0]: most execs are of no program a rule
    // denies, and are decided on those (the rest of the argv and the
    // folder are read only when one may be).
    let (path, argv0) = match (
        read_cstring(req.pid, path_ptr, 4096),
        read_argv(req.pid, argv_ptr, Some(1)),
    ) {
        (Some(path), Some(argv0)) => (path, argv0),
        (path, _) => {
            // Except the spawn's own execs, which the runner may not read:
            // without Landlock the runner is not dumpable, nor is its child
            // until an exec succeeds, and a runner without CAP_SYS_PTRACE (not
            // root) cannot read a process that is not. Those execs are of the
            // program the runner chose (a shell, a configured server or hook),
            // not a command's; they are the only calls under the filter until
            // one succeeds, and the program it starts is readable, so the
            // first call read ends them.
            if *spawning {
                return Answer::Continue;
            }
            let read: Vec<String> = path
                .iter()
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .collect();
            return refuse_unread(listener, req, refusals, ExecGuard::unreadable_exec(&read));
        }
    };
    *spawning = false;
    // No file the kernel would run (an empty path without
    // `AT_EMPTY_PATH`: ENOENT; a path ending in `/`: not a file): its
    // answer stands, and nothing is refused for it.
    let named_none = path.is_empty() && flags & libc::AT_EMPTY_PATH == 0;
    if named_none || path.ends_with(b"/") {
        return Answer::Continue;
    }
    let path = PathBuf::from(std::ffi::OsString::from_vec(path));
    // An empty path here has `AT_EMPTY_PATH` (see above): the file is
    // the descriptor's. A relative path is from the process's folder (or
    // the one `dirfd` holds), never the runner's.
    let exe = if path.as_os_str().is_empty() {
        PathBuf::from(format!("/proc/{}/fd/{dirfd}", req.pid))
    } else {
        named(req.pid, (dirfd != libc::AT_FDCWD).then_some(dirfd), &path)
    };
    // As the process finds it: `/proc/self/fd/3` is its descriptor, not
    // the runner's (see `exe_path`).
    let Some((exe, meta)) = file_as_process_sees(req.pid, &exe) else {
        return Answer::Error(libc::ELOOP);
    };
    let names = guard.names(&exe, meta, argv0.first().map(String::as_str));
    if !guard.may_deny(&names) {
        // Nothing to refuse: whatever was read, the answer is the same.
        return Answer::Continue;
    }
    let Some(argv) = read_argv(req.pid, argv_ptr, None) else {
        let refusal = guard.unreadable(&names, &argv0, "arguments");
        return refuse_unread(listener, req, refusals, refusal);
    };
    // The environment the program is given, where what it runs depends
    // on it (cargo's aliases): read the same way, and bounded alike.
    let env = if guard.reads_environment(&names) {
        match read_argv(req.pid, envp_ptr, None) {
            Some(env) => env,
            None => {
                let refusal = guard.unreadable(&names, &argv, "environment");
                return refuse_unread(listener, req, refusals, refusal);
            }
        }
    } else {
        Vec::new()
    };
    // The process is still stopped in this call: what was read is its.
    if !still_valid(listener, req.id) {
        return Answer::Error(libc::ENOENT);
    }
    // The folder the argv's paths and a program's configuration are read
    // from; unreadable, the process is gone (refused: never the runner's
    // own folder in its place).
    let Ok(cwd) = std::fs::read_link(format!("/proc/{}/cwd", req.pid)) else {
        return Answer::Error(libc::EPERM);
    };
    match guard.decide(&names, &argv, &env, &cwd) {
        None => Answer::Continue,
        Some(refusal) => {
            record(refusals, refusal);
            Answer::Error(libc::EPERM)
        }
    }
}

/// Refuses an exec that could not be read, and records `refusal` for it
/// unless the process is gone (then nothing could be read, and there is
/// nobody to tell).
fn refuse_unread(
    listener: &OwnedFd,
    req: &libc::seccomp_notif,
    refusals: &Mutex<Vec<ExecRefusal>>,
    refusal: ExecRefusal,
) -> Answer {
    if !still_valid(listener, req.id) {
        return Answer::Error(libc::ENOENT);
    }
    record(refusals, refusal);
    Answer::Error(libc::EPERM)
}

/// Keeps `refusal` for the spawn's record (at most 100) and logs it. A
/// shell looking a program up tries each folder of `PATH`: the same
/// refusal in a row is said and kept once.
fn record(refusals: &Mutex<Vec<ExecRefusal>>, refusal: ExecRefusal) {
    let mut list = refusals.lock().unwrap_or_else(|e| e.into_inner());
    if list.last() != Some(&refusal) {
        tracing::warn!("sandbox: exec refused: {refusal}");
        if list.len() < 100 {
            list.push(refusal);
        }
    }
}
