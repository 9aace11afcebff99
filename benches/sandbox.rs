//! What the supervisor costs the commands it watches: the same commands
//! under the same policy (one program deny rule, so that every exec and
//! connect goes to the runner), with the supervisor and without it
//! (`RUNNER_SIMULATE_NO_SUPERVISOR`), through `runner tool bash`.
//!
//! - a shell loop of 1,000 execs of `/bin/true`: the time added per exec;
//!   and the same with the runner and its commands kept on one processor,
//!   where no exec pays for waking a thread on another (what that costs
//!   is the machine's, not the supervisor's: see the row);
//! - 10,000 `execve` calls of `/bin/true` that the kernel fails after the
//!   supervisor has decided them (the environment's address is bad): the
//!   decision and its round trip alone, without the exec's own cost and
//!   its noise;
//! - `cargo build` of a small crate (a dependency-free library and binary,
//!   built from clean each round): the share added;
//! - the exec wall's worst cases for the programs whose aliases it reads,
//!   under `deny Bash(cargo publish:*)` and `deny Bash(gh pr merge:*)`:
//!   100 execs of a stand-in `cargo` with 64 words that are aliases in a
//!   `.cargo/config.toml` of 1 MiB, and of a stand-in `gh` whose alias is
//!   16 deep, with a 1 MiB `config.yml` in each of gh's three folders (the
//!   bounds: the largest file, the most readings or the deepest), all
//!   allowed.
//!
//! Run with `cargo bench --bench sandbox` (or `scripts/bench`); medians of
//! `BENCH_ROUNDS` (default 5) rounds, the arms alternating in swapped order
//! and the cost taken within each round (this VM's speed drifts by more
//! than the cost between rounds). Prints a Markdown table.
//! `BENCH_SANDBOX=exec,exec-one-cpu,decision,build,aliases` picks rows (many rounds of the exec
//! loop alone take minutes, not an hour).
//! `BENCH_RUNNER=/path/to/runner` measures another build (an earlier
//! commit's, to compare), as the first-request bench does.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn rounds() -> usize {
    std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
}

/// Whether `BENCH_SANDBOX` (comma-separated row names) asks for `row`; all
/// rows when it is unset.
fn wanted(row: &str) -> bool {
    std::env::var("BENCH_SANDBOX").map_or(true, |only| only.split(',').any(|r| r.trim() == row))
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Runs `command` with `runner tool bash` in `ws` under `policy`, with the
/// supervisor or without, and with the runner and everything it starts
/// kept on the first processor when `one_cpu` (the `exec-one-cpu` row);
/// the wall time.
fn timed(ws: &Path, policy: &Path, command: &str, supervised: bool, one_cpu: bool) -> Duration {
    let runner =
        std::env::var("BENCH_RUNNER").unwrap_or_else(|_| env!("CARGO_BIN_EXE_runner").into());
    let mut c = Command::new(runner);
    c.args(["tool", "bash"])
        .arg(serde_json::json!({"command": command, "timeout": 600_000}).to_string())
        .arg("--workspace")
        .arg(ws)
        .arg("--policy")
        .arg(policy)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        // The crate builds into its own folder, inside the workspace: a
        // target folder set for the bench's own build lies outside what
        // the sandbox lets commands write.
        .env_remove("CARGO_TARGET_DIR");
    if !supervised {
        c.env("RUNNER_SIMULATE_NO_SUPERVISOR", "1");
    }
    if one_cpu {
        on_first_cpu(&mut c);
    }
    let t = Instant::now();
    let st = c.status().expect("runner runs");
    let took = t.elapsed();
    assert!(st.success(), "{command} failed (supervised: {supervised})");
    took
}

/// Keeps `c` and everything it starts on the first processor (the
/// `exec-one-cpu` row, and the floor beside it).
fn on_first_cpu(c: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: one system call on a stack value, between fork and exec; the
    // mask is inherited by every thread and process after it.
    unsafe {
        c.pre_exec(|| {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(0, &mut set);
            if libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    };
}

/// One measurement's rounds: the medians with and without the supervisor,
/// and the median and quartiles of the per-round differences.
struct Paired {
    with: Duration,
    without: Duration,
    /// Seconds added by the supervisor in each round (with minus without),
    /// sorted.
    added: Vec<f64>,
}

impl Paired {
    /// Its row of the table: `added` writes seconds added in the row's
    /// unit (the median, then the quartiles).
    fn print_row(&self, what: &str, added: impl Fn(f64) -> String, unit: &str, goal: &str) {
        println!(
            "| {what} | {:.0} ms | {:.0} ms | {}{unit} ({} to {}) | {goal} |",
            self.with.as_secs_f64() * 1e3,
            self.without.as_secs_f64() * 1e3,
            added(self.added_quantile(0.5)),
            added(self.added_quantile(0.25)),
            added(self.added_quantile(0.75)),
        );
    }

    fn added_quantile(&self, q: f64) -> f64 {
        let i = ((self.added.len() - 1) as f64 * q).round() as usize;
        self.added[i]
    }
}

/// Both arms once per round, the order swapped every round (with first,
/// then without first), so that a drift of the machine's speed during the
/// run lands on both arms alike; the difference is taken within each
/// round, where the two runs are seconds apart.
fn pair(ws: &Path, policy: &Path, command: &str) -> Paired {
    pair_on(ws, policy, command, false)
}

/// [`pair`], on one processor when `one_cpu`.
fn pair_on(ws: &Path, policy: &Path, command: &str, one_cpu: bool) -> Paired {
    let (mut with, mut without, mut added) = (Vec::new(), Vec::new(), Vec::new());
    let timed = |supervised| timed(ws, policy, command, supervised, one_cpu);
    for round in 0..rounds() {
        let (w, wo) = if round % 2 == 0 {
            let w = timed(true);
            (w, timed(false))
        } else {
            let wo = timed(false);
            (timed(true), wo)
        };
        added.push(w.as_secs_f64() - wo.as_secs_f64());
        with.push(w);
        without.push(wo);
    }
    added.sort_by(f64::total_cmp);
    Paired {
        with: median(with),
        without: median(without),
        added,
    }
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(
        ws.join("Cargo.toml"),
        "[package]\nname = \"small\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("src/lib.rs"),
        "pub fn add(a: u64, b: u64) -> u64 {\n    a + b\n}\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("src/main.rs"),
        "fn main() { println!(\"{}\", small::add(2, 40)); }\n",
    )
    .unwrap();
    // `default: allow` with one program deny rule: the exec wall is on
    // (without the supervisor, the gate decides these visible commands
    // alike).
    let policy = dir.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "default: allow\nrules:\n  - deny: [\"Bash(git push:*)\"]\n",
    )
    .unwrap();
    println!(
        "Medians of {} rounds, `runner tool bash` under `deny Bash(git push:*)`; \
         the arms alternate (their order swapped each round) and \
         \"added\" is the median of the per-round differences, with its \
         quartiles.\n",
        rounds()
    );
    println!("| measurement | with the supervisor | without | added (quartiles) | goal |");
    println!("|---|---|---|---|---|");
    // The loop free, and with both arms kept on one processor. Across two
    // processors every exec also pays for waking the supervisor's thread
    // on the other one and the command back on its own, which on a
    // virtual machine can cost more than the decision (a supervisor in C
    // that decides nothing pays it too: `scripts/seccomp-notify-floor.c`);
    // on one processor the handover is a plain switch, and what is added
    // is the supervisor's own work.
    for (row, one_cpu, what) in [
        ("exec", false, "a shell loop of 1,000 execs"),
        ("exec-one-cpu", true, "the same loop, on one processor"),
    ] {
        if !wanted(row) {
            continue;
        }
        let p = pair_on(
            &ws,
            &policy,
            "for i in $(seq 1000); do /bin/true; done",
            one_cpu,
        );
        p.print_row(
            what,
            |s| format!("{:.1}", s * 1e6 / 1000.0),
            " µs per exec",
            "under 50 µs",
        );
        if one_cpu {
            // The floor, in the same run: a supervisor in C that decides
            // nothing, on the same loop and processor.
            let floor = floor_added(dir.path());
            let ours = p.added_quantile(0.5) * 1e6 / 1000.0;
            println!(
                "| the floor: a supervisor in C that decides nothing (`scripts/seccomp-notify-floor.c`), the same loop on one processor | - | - | {floor:.1} µs per exec | - |"
            );
            println!(
                "| the runner's added cost per exec against the floor's, on one processor | - | - | {:.2}× | at most 1.5× |",
                ours / floor
            );
        }
    }
    if wanted("decision") {
        // The exec's own cost is most of the loop's, and this VM's speed
        // varies by more than the supervisor adds: here no process is
        // made. Each `execve` of `/bin/true` goes to the supervisor, which
        // decides it as any exec (its path and `argv[0]`), and the kernel
        // then fails it (the environment's address is not mapped): what
        // is added is the decision and its round trip alone.
        let failing = "python3 -c \"import ctypes\nc = ctypes.CDLL(None)\nargv = (ctypes.c_char_p * 2)(b'true', None)\nfor _ in range(10000): c.execve(b'/bin/true', argv, ctypes.c_void_p(8))\"";
        let exact = serde_json::to_string(&format!("Bash({failing})")).unwrap();
        let allowed = dir.path().join("decision.policy.yaml");
        std::fs::write(
            &allowed,
            format!(
                "default: allow\nrules:\n  - deny: [\"Bash(git push:*)\"]\n  - allow: [{exact}]\n"
            ),
        )
        .unwrap();
        let p = pair(&ws, &allowed, failing);
        p.print_row(
            "10,000 `execve` calls that fail after the decision (no process made)",
            |s| format!("{:.1}", s * 1e6 / 10_000.0),
            " µs per exec",
            "under 50 µs",
        );
    }
    if wanted("build") {
        let build = "rm -rf target && cargo build --offline -q";
        let p = pair(&ws, &policy, build);
        let without = p.without.as_secs_f64();
        p.print_row(
            "`cargo build` of a small crate (from clean)",
            |s| format!("{:.1}", s / without * 100.0),
            "%",
            "under 5%",
        );
    }
    if !wanted("aliases") {
        return;
    }
    // The aliases' worst cases: the largest configuration files, and as
    // many readings as an exec may have, each decided (none denied).
    let words: Vec<String> = (0..64).map(|i| format!("a{i}")).collect();
    let mut cargo_config = String::from("[alias]\n");
    for w in &words {
        cargo_config.push_str(&format!("{w} = \"build --release -v\"\n"));
    }
    aliases_row(
        &dir.path().join("cargo"),
        "cargo publish",
        &[(".cargo/config.toml", padded(cargo_config, "#"))],
        &format!("bin/cargo {}", words.join(" ")),
        "100 execs of `cargo` with 64 aliases in a 1 MiB `.cargo/config.toml` (the alias readers' bounds)",
    );
    // gh reads the alias in its first word only, through others as deep
    // as its bound, and its three configuration folders each.
    let mut gh_config = String::from("aliases:\n");
    // 16 expansions, the deepest read.
    for i in 0..15 {
        gh_config.push_str(&format!("    c{i}: c{} x\n", i + 1));
    }
    gh_config.push_str("    c15: pr view\n");
    let mut others = String::from("aliases:\n");
    for i in 0.. {
        if others.len() > (1 << 20) - 100 {
            break;
        }
        others.push_str(&format!("    p{i}: pr view {i}\n"));
    }
    aliases_row(
        &dir.path().join("gh"),
        "gh pr merge",
        &[
            ("ghc/config.yml", padded(gh_config, "#")),
            ("xdg/gh/config.yml", others.clone()),
            ("home/.config/gh/config.yml", others),
        ],
        "GH_CONFIG_DIR=ghc XDG_CONFIG_HOME=xdg HOME=home bin/gh c0",
        "100 execs of `gh` with an alias 16 deep and three 1 MiB `config.yml` (the alias readers' bounds)",
    );
}

/// What the C floor adds per exec of a 3,000-exec loop on one
/// processor (µs): medians of its runs with and without its filter,
/// alternating, built with `cc` into `scratch`.
fn floor_added(scratch: &Path) -> f64 {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/seccomp-notify-floor.c");
    let bin = scratch.join("notify-floor");
    let built = Command::new("cc")
        .args(["-O2", "-pthread", "-o"])
        .arg(&bin)
        .arg(&src)
        .status()
        .expect("cc builds the floor");
    assert!(built.success(), "the floor does not build");
    let once = |filter: &str| -> f64 {
        let mut c = Command::new(&bin);
        c.args([filter, "0", "3000"]);
        on_first_cpu(&mut c);
        let out = c.output().expect("the floor runs");
        let text = String::from_utf8_lossy(&out.stdout);
        text.split(", ")
            .nth(1)
            .and_then(|t| t.split(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("the floor said: {text}"))
    };
    let mut added = Vec::new();
    for round in 0..rounds() {
        let (with, without) = if round % 2 == 0 {
            let w = once("1");
            (w, once("0"))
        } else {
            let wo = once("0");
            (once("1"), wo)
        };
        added.push(with - without);
    }
    added.sort_by(f64::total_cmp);
    added[added.len() / 2]
}

/// `text` padded with comment lines (`comment` starts one) to about the
/// largest file the exec wall reads.
fn padded(mut text: String, comment: &str) -> String {
    while text.len() < (1 << 20) - 80 {
        text.push_str(comment);
        text.push_str(" padding to the largest file the exec wall reads, one line at a time\n");
    }
    text
}

/// The row of 100 execs of `command` in a folder holding `files` and a
/// stand-in for the program (`bin/PROGRAM`, which does nothing), under a
/// deny rule of `denied` (so that its aliases are read).
fn aliases_row(root: &Path, denied: &str, files: &[(&str, String)], command: &str, what: &str) {
    let program = denied.split(' ').next().unwrap();
    for (name, text) in files {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let stand_in = root.join("bin").join(program);
    std::fs::create_dir_all(root.join("bin")).unwrap();
    std::fs::write(&stand_in, "#!/bin/sh\n:\n").unwrap();
    std::fs::set_permissions(
        &stand_in,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let command = format!("for i in $(seq 100); do {command}; done");
    // Setting where gh's configuration is makes the command one the gate
    // allows only by its exact text.
    let exact = serde_json::to_string(&format!("Bash({command})")).unwrap();
    let policy = root.with_extension("policy.yaml");
    std::fs::write(
        &policy,
        format!("default: allow\nrules:\n  - deny: [\"Bash({denied}:*)\"]\n  - allow: [{exact}]\n"),
    )
    .unwrap();
    pair(root, &policy, &command).print_row(
        what,
        |s| format!("{:.2}", s * 1e3 / 100.0),
        " ms per exec",
        "bounded",
    );
}
