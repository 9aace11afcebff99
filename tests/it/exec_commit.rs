//! The exec wall where the kernel commits an exec (issue 71): attacks that
//! let the first look (the notification) see one thing and the kernel run
//! another. Each runs for real, as one task's bash call, under `default:
//! allow` with `deny Bash(git push:*)` and a bare remote the sandbox lets
//! commands write; each push would land without the second look (the
//! old wall let them all through), and none does now.

use std::path::Path;

use crate::common::{compile_c, write};
use crate::exec_wall::{git, run_passing_with, without_supervisor, workspace_with_remote};

/// The task settings: the deny rule, the remote writable.
fn settings(remote: &Path) -> String {
    format!(
        "max_turns: 4\nworkspace: ws\npolicy:\n  default: allow\n  rules:\n    - deny: [\"Bash(git push:*)\"]\nsandbox: {{write: [\"{}\"]}}\n",
        remote.display()
    )
}

/// The refs the remote got (none, when the wall held).
fn pushed(remote: &Path) -> String {
    String::from_utf8_lossy(&git(remote, &["for-each-ref"]).stdout).into_owned()
}

/// The records of the run's one call that the exec was refused where the
/// kernel committed it, by the push rule.
fn ended_refusals(t: &serde_json::Value) -> usize {
    t["tool_calls"][0]["metadata"]["sandbox_refusals"]
        .as_array()
        .map_or(0, |rs| {
            rs.iter()
                .filter(|r| r["ended"] == true && r["rule"] == "deny Bash(git push:*)")
                .count()
        })
}

/// A file of git's size with one byte changed is executed; the moment the
/// supervisor has read it (inotify's `IN_CLOSE_NOWRITE`), a link to the
/// real git is renamed over it, and the kernel, looking the path up again,
/// runs git. Deterministic: the first look decides on the file it read.
#[test]
fn a_path_swapped_after_the_first_look_is_refused_where_the_kernel_runs_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let remote = workspace_with_remote(d);
    write(
        d,
        "ws/swap.py",
        r#"import ctypes, os, shutil
libc = ctypes.CDLL(None, use_errno=True)
git = shutil.which('git')
tmp = os.environ['TMPDIR']
g, link = os.path.join(tmp, 'g'), os.path.join(tmp, 'g.link')
data = bytearray(open(git, 'rb').read())
data[-1] ^= 0xff  # not a copy of git: the first look lets it go
open(g, 'wb').write(data)
os.chmod(g, 0o755)
os.symlink(git, link)
fd = libc.inotify_init1(0)
assert libc.inotify_add_watch(fd, g.encode(), 0x10) >= 0  # IN_CLOSE_NOWRITE
if os.fork() == 0:
    os.read(fd, 4096)  # the supervisor has read it
    os.rename(link, g)
    os._exit(0)
# git runs as git whatever its argv[0] says (unless it starts `git-`).
os.execv(g, ['x', 'push', '-q', 'origin', 'HEAD:refs/heads/pushed'])
"#,
    );
    let t = run_passing_with(d, &settings(&remote), &["python3 swap.py"], &[]);
    if without_supervisor(&t) {
        return;
    }
    assert_eq!(t["backstops"]["exec"], true, "{}", t["sandbox"]);
    assert_eq!(pushed(&remote), "", "the push landed");
    assert_eq!(ended_refusals(&t), 1, "{}", t["tool_calls"][0]);
    assert!(
        t["tool_calls"][0]["content"]
            .as_str()
            .is_some_and(|c| c.contains("the process was ended before the program ran")),
        "{}",
        t["tool_calls"][0]["content"]
    );
}

/// A thread flips argv[1] between `version` and `push` while the other
/// execs git: the first look reads one, the kernel copies whichever is
/// there then. 10,000 tries in a bounded loop (stopped after five flips
/// have landed); every landed flip is ended before git runs.
#[test]
fn an_argv_flipped_by_a_thread_is_refused_where_the_kernel_runs_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let remote = workspace_with_remote(d);
    let src = write(
        d,
        "flip.c",
        r#"#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static char *args[] = {"git", "version", "-q", "origin", "HEAD:refs/heads/pushed", 0};
static volatile int flipping;
static void *flip(void *_) {
    char *volatile *word = &args[1];
    flipping = 1;
    for (;;) { *word = "push"; *word = "version"; }
    return 0;
}
int main(int argc, char **argv) {
    int tries = atoi(argv[1]), killed = 0, refused = 0, ran = 0, i;
    for (i = 0; i < tries && killed < 5; i++) {
        pid_t p = fork();
        if (p == 0) {
            pthread_t t;
            int null = open("/dev/null", O_WRONLY);
            dup2(null, 2);
            pthread_create(&t, 0, flip, 0);
            while (!flipping) {}
            execv(argv[2], args);
            _exit(126);
        }
        int st;
        waitpid(p, &st, 0);
        if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) killed++;
        else if (WIFEXITED(st) && WEXITSTATUS(st) == 126) refused++;
        else ran++;
    }
    printf("tries %d killed %d refused %d ran %d\n", i, killed, refused, ran);
    return 0;
}
"#,
    );
    compile_c(&src, &d.join("ws/flip"), &["-O2", "-pthread"]);
    let t = run_passing_with(
        d,
        &settings(&remote),
        &["./flip 10000 \"$(command -v git)\""],
        &[],
    );
    if without_supervisor(&t) {
        return;
    }
    let call = &t["tool_calls"][0];
    assert_eq!(pushed(&remote), "", "the push landed: {}", call["content"]);
    assert!(
        call["content"]
            .as_str()
            .is_some_and(|c| c.contains("tries ")),
        "{}",
        call["content"]
    );
    eprintln!("{}", call["content"]);
}

/// Where the runner may not ptrace its commands (simulated), the exec
/// wall's first look still runs but the backstop is not held: the
/// transcript says why, and inline code under a program deny is refused
/// by the gate, as with no wall.
#[test]
fn without_ptrace_the_exec_backstop_is_not_held_and_the_gate_stays_strict() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let remote = workspace_with_remote(d);
    let t = run_passing_with(
        d,
        &settings(&remote),
        &["python3 -c 'print(6 * 7)'"],
        &[("RUNNER_SIMULATE_NO_EXEC_FOLLOW", "1")],
    );
    if without_supervisor(&t) {
        return;
    }
    assert_eq!(t["backstops"]["exec"], false, "{}", t["backstops"]);
    let sandbox = t["sandbox"].as_str().unwrap();
    assert!(
        sandbox.contains("not again where the kernel runs them")
            && sandbox.contains("RUNNER_SIMULATE_NO_EXEC_FOLLOW"),
        "{sandbox}"
    );
    assert_eq!(
        t["tool_calls"][0]["decision"]["decision"], "deny",
        "{}",
        t["tool_calls"][0]
    );
}
