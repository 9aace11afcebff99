//! Helpers shared by the tests that drive the `runner` binary.
#![allow(dead_code)] // each test file uses its own subset

pub mod fake_batch;
pub mod fake_llm;
pub mod wire;

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;

/// The binary under test.
pub fn runner() -> Command {
    Command::cargo_bin("runner").unwrap()
}

/// The repository root (for the examples and shared files).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `git ARGS` in `dir` as user `t`, which must succeed; what it printed.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `runner run -q --out out EXTRA TASK` in `d`, which must exit `code`;
/// task `t`'s transcript.
pub fn run_task(d: &Path, task: &Path, extra: &[&str], code: i32) -> serde_json::Value {
    let o = runner()
        .current_dir(d)
        .args(["run", "-q", "--out", "out"])
        .args(extra)
        .arg(task)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(code), "{}", stderr(&o));
    read_json(d.join("out/t/transcript.json"))
}

/// Writes `dir/name` and returns its path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&p, text).unwrap();
    p
}

/// Reads a JSON output file (a transcript). A transcript's outcome
/// reason, which is what a user reads of an error, must name no Rust type
/// path (see [`stderr`]).
pub fn read_json(path: impl AsRef<Path>) -> serde_json::Value {
    let path = path.as_ref();
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v: serde_json::Value =
        serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if let Some(reason) = v["outcome"]["reason"].as_str()
        && let Some(p) = rust_type_path(reason)
    {
        panic!(
            "{}: the outcome names a Rust type path `{p}`: {reason}",
            path.display()
        );
    }
    v
}

/// Lines of stderr, for messages. Every test that reads a run's stderr
/// also checks that no message in it names a Rust type path
/// (`rmcp::transport::...`, `std::io::Error`): errors are for people.
pub fn stderr(o: &std::process::Output) -> String {
    let text = String::from_utf8_lossy(&o.stderr).into_owned();
    if let Some(path) = rust_type_path(&text) {
        panic!("stderr names a Rust type path `{path}`:\n{text}");
    }
    text
}

/// The first Rust type path in `text` (`name::Name`, `name::name::...`).
pub fn rust_type_path(text: &str) -> Option<String> {
    static PATH: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\b[a-z][a-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)+").unwrap()
    });
    PATH.find(text).map(|m| m.as_str().to_string())
}

/// A scripted model's turns, one `bash` call each, as task YAML lines.
pub fn bash_turns(commands: &[&str]) -> String {
    commands
        .iter()
        .map(|c| {
            format!(
                "  - tool_calls:\n      - {{name: bash, args: {{command: {}}}}}\n",
                serde_json::to_string(c).unwrap()
            )
        })
        .collect()
}

/// Copies a folder with `cp -a`.
pub fn copy_tree(from: &Path, to: &Path) {
    let st = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(st.success());
}

/// Copies the examples (tasks, policies, the shop) to a temp folder.
pub fn examples() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for d in ["tasks", "policies", "examples"] {
        copy_tree(&repo().join(d), &dir.path().join(d));
    }
    dir
}

/// Runs a Python script with `args`, feeding `stdin`; panics with its
/// stderr unless it succeeds, and returns its stdout.
pub fn python(script: &str, args: &[&str], stdin: &[u8]) -> String {
    use std::io::Write;
    let mut py = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    py.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = py.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "python: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `runner validate FILE` in `dir`, which must refuse it (exit 2): its
/// stderr.
pub fn validate_refuses(dir: &Path, file: &str) -> String {
    let out = runner()
        .current_dir(dir)
        .args(["validate", file])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    stderr(&out)
}

/// `runner validate FILE` in `dir`, which must accept it (exit 0).
pub fn validate_accepts(dir: &Path, file: &str) {
    let out = runner()
        .current_dir(dir)
        .args(["validate", file])
        .output()
        .unwrap();
    assert!(out.status.success(), "{file}: {}", stderr(&out));
}

/// The JSON lines of a `runner run --format json` (its stdout), parsed.
pub fn events(out: &std::process::Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The pids of the processes whose command line is exactly `words`.
pub fn processes(words: &[&str]) -> Vec<i32> {
    let want: Vec<u8> = words
        .iter()
        .flat_map(|w| [w.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| std::fs::read(e.path().join("cmdline")).ok().as_deref() == Some(&want[..]))
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

/// How many processes have the command line `words`.
pub fn processes_running(words: &[&str]) -> usize {
    processes(words).len()
}

/// Kills (SIGKILL) every process whose command line is `words`: what a
/// runner killed outright leaves running.
pub fn kill_processes(words: &[&str]) {
    for pid in processes(words) {
        // SAFETY: a plain system call on a process a test started.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// Waits up to `within` until no process has the command line `words`
/// (a killed process may take a moment to leave /proc); how many are left.
pub fn wait_until_gone(words: &[&str], within: std::time::Duration) -> usize {
    let deadline = std::time::Instant::now() + within;
    while processes_running(words) > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    processes_running(words)
}

/// Whether the tests run as root.
pub fn is_root() -> bool {
    // SAFETY: getuid cannot fail.
    unsafe { libc::getuid() == 0 }
}

/// Whether this process's pids cgroup is in a cgroup v1 hierarchy (a
/// `tasks` file: threads move), where a runner it starts as root makes
/// its tasks' cgroups beneath, and forks their commands inside.
pub fn pids_cgroup_v1() -> bool {
    std::fs::read_to_string("/proc/self/cgroup")
        .unwrap()
        .lines()
        .find_map(|l| l.split_once(":pids:").map(|(_, p)| p.to_string()))
        .is_some_and(|p| Path::new(&format!("/sys/fs/cgroup/pids{p}/tasks")).exists())
}

/// Waits (up to 30 s) until a process with the command line `sleeper`
/// runs.
pub fn wait_until_running(sleeper: &[&str]) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while processes_running(sleeper) == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the command never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Waits (up to 30 s) until a process with the command line `sleeper`
/// runs (the agent's command), then sends `child` SIGTERM, as CI does
/// when a job is cancelled.
pub fn sigterm_once_running(child: &std::process::Child, sleeper: &[&str]) {
    wait_until_running(sleeper);
    // SAFETY: a plain system call on a child this test spawned.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
}

/// The turn numbers of a transcript's turn records.
pub fn turn_numbers(t: &serde_json::Value) -> Vec<u64> {
    t["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["turn"].as_u64().unwrap())
        .collect()
}

/// Starts `cmd` (its output dropped) and returns once a process with the
/// command line `sleeper` runs (up to 60 s), failing if the run ends first.
pub fn start_until_running(mut cmd: Command, sleeper: &[&str]) -> std::process::Child {
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while processes_running(sleeper) == 0 {
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        assert!(
            std::time::Instant::now() < deadline,
            "{sleeper:?} never ran"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child
}

/// The fork bomb commands' results ([`FORK_BOMB`] then `echo next`): the
/// bomb's forks failed, it ended, and the next command ran.
pub fn assert_the_bomb_failed_to_fork(r: &[String]) {
    assert!(r[0].contains("bomb-ended"), "{}", r[0]);
    assert!(
        r[0].contains("fork") || r[0].contains("Resource temporarily unavailable"),
        "{}",
        r[0]
    );
    assert!(r[1].contains("next"), "{}", r[1]);
}

/// A fork bomb under a 3-second timeout, then a command after it.
pub const FORK_BOMB: [&str; 2] = [
    "timeout 3 bash -c ':(){ :|:& };:' 2>&1 | head -c 2000; echo bomb-ended",
    "echo next",
];

/// Compiles the C program `src` to `bin` with `cc` and `flags` (an attack
/// probe: threads, raw system calls); panics with the compiler's words.
pub fn compile_c(src: &Path, bin: &Path, flags: &[&str]) {
    let cc = Command::new("cc")
        .args(flags)
        .arg("-o")
        .arg(bin)
        .arg(src)
        .output()
        .expect("a C compiler (scripts/install-test-deps installs gcc)");
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
}

/// What the bash call `i` printed.
pub fn printed(t: &serde_json::Value, i: usize) -> String {
    let call = &t["tool_calls"][i];
    assert_eq!(call["status"], "ok", "{}", call["content"]);
    let c = call["content"].as_str().unwrap();
    let out = c.split("--- stdout ---\n").nth(1).unwrap_or("");
    out.split("\n--- stderr ---").next().unwrap().to_string()
}

/// actionlint passes on `files` (workflows); its findings otherwise.
pub fn actionlint<P: AsRef<Path>>(files: &[P]) {
    let lint = Command::new("actionlint")
        .arg("-no-color")
        .args(files.iter().map(AsRef::as_ref))
        .output()
        .expect("actionlint (scripts/install-test-deps installs it)");
    assert!(
        lint.status.success(),
        "{}",
        String::from_utf8_lossy(&lint.stdout)
    );
}
