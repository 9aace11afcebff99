//! The supervisor's exec decision: the path and `argv[0]` read from the
//! stopped process (and, when they name a program a rule denies, the whole
//! argv and its folder, and for cargo and gh their environment), decided
//! by the [`ExecGuard`]; a refusal recorded for the spawn before the
//! process hears of it.

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::connect::still_valid;
use super::exe_path::{file_as_process_sees, named};
use super::follow;
use super::memory::{read_argv, read_cstring};
use super::procs;
use super::rules::{Answer, Rules};
use crate::contain::os::exec_guard::{ExecGuard, ExecNames, ExecRefusal, Loads};
use crate::contain::os::exec_guard::{loader_reading, swappable};
use crate::contain::os::private_tmp::TmpView;

/// What the first look makes of an exec.
pub(super) enum First {
    /// Answered here (refused, or a lookup that fails before the kernel
    /// reads a file); not followed.
    Answered(Answer),
    /// Let go: follow it to where the kernel commits it. What was read of
    /// its argv (for the record, should it not be followed).
    Follow(Vec<String>),
    /// Let go unfollowed: the spawn's own exec of the program the runner
    /// chose.
    Spawning,
}

/// Decides one `execve`/`execveat` against the policy's program denies.
/// `spawning`: no call the runner could read has come yet (see below);
/// set to false by the first one.
pub(super) fn decide_exec(
    req: &libc::seccomp_notif,
    listener: &OwnedFd,
    guard: &ExecGuard,
    rules: &Rules,
    refusals: &Refused<'_>,
    spawning: &mut bool,
) -> First {
    // The spawn's own execs the runner cannot read (see `first_look`)
    // are let go as they are: it could not follow them either.
    let before = *spawning;
    let mut read = Vec::new();
    let view = rules.tmp.as_deref();
    match first_look(req, listener, guard, view, refusals, spawning, &mut read) {
        Answer::Continue if before && *spawning => First::Spawning,
        Answer::Continue => First::Follow(read),
        a => First::Answered(a),
    }
}

/// The first look: decided on what the caller's memory says now.
fn first_look(
    req: &libc::seccomp_notif,
    listener: &OwnedFd,
    guard: &ExecGuard,
    view: Option<&TmpView>,
    refusals: &Refused<'_>,
    spawning: &mut bool,
    read: &mut Vec<String>,
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
        named(
            req.pid,
            (dirfd != libc::AT_FDCWD).then_some(dirfd),
            &path,
            view,
        )
    };
    // As the process finds it: `/proc/self/fd/3` is its descriptor, not
    // the runner's (see `exe_path`).
    let Some((exe, meta)) = file_as_process_sees(req.pid, &exe, view) else {
        return Answer::Error(libc::ELOOP);
    };
    // What fails before the kernel reads a file fails here as it would
    // there (no such file, a folder, no bit to run it by), and is not
    // followed: a shell's or `execvp`'s walk along `PATH` fails in most
    // folders it tries.
    let meta = match meta.map(Ok).unwrap_or_else(|| std::fs::metadata(&exe)) {
        Ok(m) => m,
        Err(e) => return Answer::Error(e.raw_os_error().unwrap_or(libc::ENOENT)),
    };
    if !meta.is_file() || std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o111 == 0
    {
        return Answer::Error(libc::EACCES);
    }
    let names = guard.names(&exe, Some(meta), argv0.first().map(String::as_str));
    read.clone_from(&argv0);
    if !guard.may_deny(&names) {
        // Nothing to refuse: whatever was read, the answer is the same.
        return Answer::Continue;
    }
    let Some(argv) = read_argv(req.pid, argv_ptr, None) else {
        let refusal = guard.unreadable(&names, &argv0, "arguments");
        return refuse_unread(listener, req, refusals, refusal);
    };
    read.clone_from(&argv);
    // The environment the program is given, where what it runs depends
    // on it (cargo's aliases): read the same way, and bounded alike.
    let env = if guard.reads_environment(&names) || names.is_loader() {
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
    let Some(cwd) = folder_of(req.pid as i32, view) else {
        return Answer::Error(libc::EPERM);
    };
    match decide_names(
        req.pid as i32,
        guard,
        &names,
        &argv,
        &env,
        &cwd,
        Look::First(view),
    ) {
        None => Answer::Continue,
        Some(refusal) => {
            record(refusals, refusal);
            Answer::Error(libc::EPERM)
        }
    }
}

/// Which look decides: the first (with the command's private `/tmp`, if
/// any), or the one where the exec committed, with its rules.
#[derive(Clone, Copy)]
enum Look<'a> {
    First(Option<&'a TmpView>),
    Late(&'a Rules),
}

/// Decides an exec that goes by `names` with `argv` and `env` in `cwd`,
/// of process `pid`: a loader's as the program it loads. `look`: at the
/// look where the exec committed (with its rules), it also refuses a
/// loader's program the command could swap (the loader opens it after
/// this look).
fn decide_names(
    pid: i32,
    guard: &ExecGuard,
    names: &ExecNames,
    argv: &[String],
    env: &[String],
    cwd: &Path,
    look: Look<'_>,
) -> Option<ExecRefusal> {
    let (view, late) = match look {
        Look::First(view) => (view, None),
        Look::Late(rules) => (rules.tmp.as_deref(), Some(rules)),
    };
    if !names.is_loader() {
        return guard.decide(names, argv, env, cwd);
    }
    let (program, loaded) = match loader_reading(argv, env) {
        Loads::Nothing => return None,
        Loads::Program { program, argv, .. } => (program, argv),
    };
    let refuse = |why: String| Some(ExecGuard::undecidable_load(argv, why));
    if !program.contains('/') {
        return refuse(format!(
            "the loader is given `{program}` without a folder: which file it maps cannot be told"
        ));
    }
    let named = named(pid as u32, None, Path::new(&program), view);
    let Some((path, meta)) = file_as_process_sees(pid as u32, &named, view) else {
        return refuse(format!("`{program}` cannot be looked up"));
    };
    if let Some(rules) = late {
        // As the runner finds it: a private `/tmp`'s path is in a folder
        // commands may write.
        let given = if program.starts_with('/') {
            rules.runner_path(PathBuf::from(&program))
        } else {
            cwd.join(&program)
        };
        let real = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        let writable = rules
            .writes_confined
            .then_some(rules.unix_within.as_slice());
        if let Some(why) = swappable(&given, &real, writable) {
            return refuse(format!(
                "the loader opens `{program}` after the wall looked, and {why}"
            ));
        }
    }
    let inner = guard.names(&path, meta, loaded.first().map(String::as_str));
    if inner.is_loader() {
        return refuse("a loader given a loader".into());
    }
    guard
        .decide(&inner, &loaded, env, cwd)
        .map(|r| ExecRefusal {
            argv: argv.to_vec(),
            ..r
        })
}

/// Most bytes of a process's `cmdline` or `environ` the late look reads
/// (Linux's own bound on both together is 2 MiB by default).
const MAX_PROC_STRINGS: usize = 4 << 20;

/// The NUL-separated strings of `/proc/PID/{what}`; `None` when unread or
/// past [`MAX_PROC_STRINGS`].
fn proc_strings(pid: i32, what: &str) -> Option<Vec<String>> {
    use std::io::Read;
    let mut f = std::fs::File::open(format!("/proc/{pid}/{what}")).ok()?;
    // Most are a few hundred bytes: one read (procfs reads short only at
    // the end), more for a long one.
    let mut bytes = vec![0u8; 4096];
    let mut len = 0;
    loop {
        if len == bytes.len() {
            if len > MAX_PROC_STRINGS {
                return None;
            }
            bytes.resize(len * 2, 0);
        }
        let n = f.read(&mut bytes[len..]).ok()?;
        len += n;
        if n == 0 || len < bytes.len() {
            break;
        }
    }
    bytes.truncate(len);
    if bytes.last() == Some(&0) {
        bytes.pop();
    }
    if bytes.is_empty() {
        return Some(Vec::new());
    }
    Some(
        bytes
            .split(|b| *b == 0)
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect(),
    )
}

/// Decides the exec of process `pid` where the kernel committed it
/// (stopped before the program's first instruction, see [`super::follow`]):
/// on the file it mapped (`/proc/PID/exe`, read through that link), the
/// argv on its new stack and, for a loader, the program it is to load.
/// A refusal, if any; what cannot be read is refused (unless the process
/// is gone: then there is nothing to refuse).
pub(super) fn decide_committed(pid: i32, guard: &ExecGuard, rules: &Rules) -> Option<ExecRefusal> {
    let exe = PathBuf::from(format!("/proc/{pid}/exe"));
    let read = (
        std::fs::metadata(&exe),
        std::fs::read_link(&exe),
        proc_strings(pid, "cmdline"),
    );
    let (Ok(meta), Ok(target), Some(argv)) = read else {
        // Gone meanwhile (killed from outside): nothing to refuse.
        super::procs::stat(pid)?;
        return Some(ExecGuard::unreadable_exec(&[format!("/proc/{pid}/exe")]));
    };
    let names = guard.names_of(
        target.file_name(),
        &exe,
        Some(meta),
        argv.first().map(String::as_str),
    );
    if !guard.may_deny(&names) {
        return None;
    }
    let view = rules.tmp.as_deref();
    let Some(cwd) = folder_of(pid, view) else {
        return Some(guard.unreadable(&names, &argv, "folder"));
    };
    let env = if guard.reads_environment(&names) || names.is_loader() {
        match proc_strings(pid, "environ") {
            Some(env) => env,
            None => return Some(guard.unreadable(&names, &argv, "environment")),
        }
    } else {
        Vec::new()
    };
    decide_names(pid, guard, &names, &argv, &env, &cwd, Look::Late(rules))
}

/// The folder process `pid` is in, as the runner finds it (`view`: its
/// private `/tmp`); `None` when it is gone.
fn folder_of(pid: i32, view: Option<&TmpView>) -> Option<PathBuf> {
    let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).ok()?;
    Some(match view {
        Some(v) => v.runner_path(&cwd),
        None => cwd,
    })
}

/// Refuses an exec that could not be read, and records `refusal` for it
/// unless the process is gone (then nothing could be read, and there is
/// nobody to tell).
fn refuse_unread(
    listener: &OwnedFd,
    req: &libc::seccomp_notif,
    refusals: &Refused<'_>,
    refusal: ExecRefusal,
) -> Answer {
    if !still_valid(listener, req.id) {
        return Answer::Error(libc::ENOENT);
    }
    record(refusals, refusal);
    Answer::Error(libc::EPERM)
}

/// A spawn's exec refusals, and the one its task said last.
pub(super) struct Refused<'a> {
    /// The spawn's record.
    pub list: &'a Mutex<Vec<ExecRefusal>>,
    /// The refusal the task's spawns said last on stderr (see
    /// [`Rules::said`]).
    pub said: &'a Mutex<Option<ExecRefusal>>,
}

/// Keeps `refusal` for the spawn's record (at most 100) and says it on
/// stderr. A shell looking a program up tries each folder of `PATH`: the
/// same refusal in a row is kept once. It is said once in a row for the
/// task: a plain command the wall refuses is tried again by bash, which
/// meets the same refusal in a spawn of its own.
pub(super) fn record(refusals: &Refused<'_>, refusal: ExecRefusal) {
    let mut list = refusals.list.lock().unwrap_or_else(|e| e.into_inner());
    if list.last() == Some(&refusal) {
        return;
    }
    let mut said = refusals.said.lock().unwrap_or_else(|e| e.into_inner());
    if said.as_ref() != Some(&refusal) {
        tracing::warn!("sandbox: exec refused: {refusal}");
        *said = Some(refusal.clone());
    }
    if list.len() < 100 {
        list.push(refusal);
    }
}

/// Attaches to the thread of `req`, whose exec the first look lets go
/// (see [`follow`]); the thread and its process, or the answer when it
/// cannot be followed: gone, or refused and recorded (what cannot be
/// followed is not let go).
pub(super) fn follow_exec(
    req: &libc::seccomp_notif,
    rules: &Rules,
    alarm: &mut Option<follow::Alarm>,
    refusals: &Refused<'_>,
    read: &[String],
) -> Result<(i32, i32), Answer> {
    let tid = req.pid as i32;
    if alarm.is_none() {
        match follow::Alarm::new() {
            Ok(a) => *alarm = Some(a),
            Err(e) => {
                let why = format!("no timer to bound the wait: {e}");
                record(refusals, ExecGuard::unfollowable(read, why));
                return Err(Answer::Error(libc::EPERM));
            }
        }
    }
    // Its process, read while it waits in its call (a thread other than
    // the first takes the process's number when its exec commits).
    // SAFETY: signal 0 to the thread in its own group: a probe, sent to
    // nobody.
    let leader = unsafe { libc::syscall(libc::SYS_tgkill, tid, tid, 0) } == 0;
    let tgid = if leader {
        tid
    } else {
        procs::thread_group(tid as u32).map_or(tid, |g| g as i32)
    };
    match follow::attach(tid, rules.killable_recv) {
        Ok(()) => Ok((tid, tgid)),
        Err(libc::ESRCH) => Err(Answer::Error(libc::ENOENT)),
        Err(e) => {
            let why = format!(
                "it cannot be followed to where the kernel runs it: {}",
                io::Error::from_raw_os_error(e)
            );
            record(refusals, ExecGuard::unfollowable(read, why));
            Err(Answer::Error(libc::EPERM))
        }
    }
}

/// Waits for the followed exec of thread `tid` (of process `tgid`) to
/// commit, and decides it there: a refusal is recorded and the process
/// ended before its program runs.
pub(super) fn conclude(
    alarm: &follow::Alarm,
    tid: i32,
    tgid: i32,
    guard: &ExecGuard,
    rules: &Rules,
    refusals: &Refused<'_>,
) {
    let committed = follow::await_exec(alarm, tid, tgid, rules.killable_recv);
    if let follow::Committed::Exec(pid) = committed {
        match decide_committed(pid, guard, rules) {
            None => follow::release(pid),
            Some(refusal) => {
                record(
                    refusals,
                    ExecRefusal {
                        ended: true,
                        ..refusal
                    },
                );
                follow::kill(pid);
            }
        }
    }
}
