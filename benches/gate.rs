//! The gate's worst cases: commands and policies shaped to make an
//! analysis hang, abort or blow up (issue 28), each decided through the
//! same gate a run uses (`decide_call`), beside an everyday command.
//!
//! Each shape runs in a child process of its own, on a thread with a tokio
//! worker's 2 MiB stack (this binary with `--shape NAME`), so that a hang
//! is cut at `BENCH_TIMEOUT` seconds (default 30) and a crash is reported
//! instead of ending the bench; the child prints its median time over
//! `BENCH_ROUNDS` rounds (default 3) and its peak memory. Goals (see
//! docs/src/performance-log.md): any command up to the 10,000-character
//! limit decided in under 50 ms and 64 MB; 10,000 rules loaded in 1 s.
//!
//! Run with `cargo bench --features test-tools --bench gate`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use runner::engine::pipeline::decide_call;
use runner::tools::{Registry, ToolContext};
use runner::workspace::Workspace;
use runner_policy::{MAX_RULES, PolicySet, parse_policy_yaml};

mod support {
    pub mod gate_shapes;
}

use support::gate_shapes::{SHAPES, cds_away};

fn rounds() -> usize {
    std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--shape") {
        // On a thread with the stack of a tokio worker (2 MiB), where a
        // run decides its calls.
        let name = args[i + 1].clone();
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || child(&name))
            .unwrap()
            .join()
            .unwrap();
        return;
    }
    let timeout: u64 = std::env::var("BENCH_TIMEOUT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let only = std::env::var("BENCH_ONLY").ok();
    println!("| shape | decision | time (median) | peak memory |");
    println!("|---|---|---|---|");
    for s in SHAPES {
        if only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|n| n == s.name))
        {
            continue;
        }
        let (decision, time, mem) = run_child(s.name, timeout);
        println!("| {} | {decision} | {time} | {mem} |", s.what);
    }
}

/// Runs one shape in a child, cut at `timeout` seconds.
fn run_child(name: &str, timeout: u64) -> (String, String, String) {
    let exe = std::env::current_exe().unwrap();
    let mut child = Command::new(exe)
        .args(["--shape", name])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(timeout);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            if !status.success() {
                use std::os::unix::process::ExitStatusExt;
                let why = match status.signal() {
                    Some(libc::SIGSEGV) | Some(libc::SIGABRT) => "abort (stack overflow)".into(),
                    Some(sig) => format!("killed by signal {sig}"),
                    None => format!("panic (exit {})", status.code().unwrap_or(-1)),
                };
                return (why, "-".into(), "-".into());
            }
            let mut parts = text.trim().splitn(3, '\t');
            return (
                parts.next().unwrap_or("?").to_string(),
                parts.next().unwrap_or("?").to_string(),
                parts.next().unwrap_or("?").to_string(),
            );
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return (format!("hang (> {timeout} s)"), "-".into(), "-".into());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn peak_memory() -> String {
    // SAFETY: getrusage on a stack value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    format!("{:.1} MB", ru.ru_maxrss as f64 / 1024.0)
}

/// A workspace with `files` files at the root and `dirs` folders.
fn workspace(files: usize, dirs: usize) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for i in 0..files {
        std::fs::write(d.path().join(format!("f{i}")), "").unwrap();
    }
    for i in 0..dirs {
        std::fs::create_dir(d.path().join(format!("d{i}"))).unwrap();
    }
    d
}

fn fill(prefix: &str, unit: &str, limit: usize) -> String {
    let mut s = prefix.to_string();
    while s.len() + unit.len() <= limit {
        s.push_str(unit);
    }
    s
}

/// The policy a shape is decided under.
fn policy(yaml: &str) -> PolicySet {
    let p = parse_policy_yaml(yaml, Path::new("bench.yaml")).unwrap();
    PolicySet::new(vec![p])
}

const EVERYDAY_POLICY: &str = "default: deny\nrules:\n  - allow: [\"Bash(cargo test:*)\", \"Bash(tail:*)\", \"Bash(cat:*)\", \"Bash(find:*)\", \"Bash(echo:*)\"]\n  - deny: [\"Read(.env)\", \"Edit(.github/**)\", \"Bash(rm:*)\"]\n";

/// The heredoc shapes' policy: an agent writing and running a program, with
/// only path denies (which the backstops back).
const HEREDOC_POLICY: &str = "default: deny\nrules:\n  - allow: [\"Bash(cat:*)\", \"Bash(python3:*)\", \"Bash(make:*)\", \"Bash(nproc)\", \"Bash(expr:*)\", \"Edit(**)\"]\n  - deny: [\"Read(.env)\", \"Edit(.github/**)\"]\n";

/// Every backstop but the supervisor's: a run with Landlock and the
/// network off.
fn every_backstop() -> runner_policy::Backstops {
    runner_policy::Backstops {
        exec: false,
        ..runner_policy::Backstops::all()
    }
}

fn many_rules(n: usize) -> String {
    let mut y = String::from("default: deny\nrules:\n  - allow:\n");
    for i in 0..n / 2 {
        y.push_str(&format!("      - \"Bash(tool{i} run:*)\"\n"));
    }
    y.push_str("  - deny:\n");
    for i in 0..n - n / 2 {
        y.push_str(&format!("      - \"Read(secrets{i}/**)\"\n"));
    }
    y
}

fn child(name: &str) {
    let decide_bash = |ws: &Path, set: &PolicySet, command: &str| {
        let workspace = Workspace::new(ws).unwrap();
        let ctx = ToolContext::new(workspace);
        let registry = Registry::builtin();
        let bash = registry.get("bash").unwrap();
        let args = serde_json::json!({ "command": command });
        let mut verdict = String::new();
        let times: Vec<Duration> = (0..rounds())
            .map(|_| {
                let t = Instant::now();
                let d = decide_call(bash.as_ref(), &args, set, &ctx);
                let e = t.elapsed();
                verdict = match d {
                    Ok((_, d)) => format!(
                        "{:?}{}",
                        d.verdict,
                        d.reason
                            .filter(|r| r.contains("too complex"))
                            .map(|_| " (too complex)")
                            .unwrap_or("")
                    )
                    .to_lowercase(),
                    Err(e) => format!("refused: {}", e.message),
                };
                e
            })
            .collect();
        (verdict, median(times))
    };
    let timed_load = |yaml: &str| {
        let mut verdict = String::new();
        let times: Vec<Duration> = (0..rounds())
            .map(|_| {
                let t = Instant::now();
                let r = parse_policy_yaml(yaml, Path::new("bench.yaml"));
                let e = t.elapsed();
                verdict = match r {
                    Ok(p) => format!("loaded ({} rules)", p.rules.len()),
                    Err(es) => format!("load error: {}", es[0].message),
                };
                e
            })
            .collect();
        (verdict, median(times))
    };
    let timed = |decide: &dyn Fn() -> String| {
        let mut verdict = String::new();
        let times: Vec<Duration> = (0..rounds())
            .map(|_| {
                let t = Instant::now();
                verdict = decide();
                t.elapsed()
            })
            .collect();
        (verdict, median(times))
    };
    let (verdict, time) = match name {
        "everyday" => {
            let ws = workspace(0, 0);
            decide_bash(
                ws.path(),
                &policy(EVERYDAY_POLICY),
                "cargo test --workspace 2>&1 | tail -n 50",
            )
        }
        "scripts-by-path" | "loader-nested" | "find-xargs-grep" | "perl-pe" | "parallel-values" => {
            let ws = workspace(0, 0);
            let cmd = support::gate_shapes::issue_71_command(name, ws.path());
            decide_bash(ws.path(), &policy(EVERYDAY_POLICY), &cmd)
        }
        "parens-69" => {
            let ws = workspace(0, 0);
            let cmd = fill("( ", "(( ", 69);
            decide_bash(ws.path(), &policy(EVERYDAY_POLICY), &cmd)
        }
        "parens-10k" => {
            let ws = workspace(0, 0);
            let cmd = fill("", "( (( (( (( (( x ) ) ) ) ) ) ) ) );\n", 10_000);
            decide_bash(ws.path(), &policy(EVERYDAY_POLICY), &cmd)
        }
        "braces-1500" => {
            let ws = workspace(0, 0);
            let cmd = format!("{} echo x;{}", "{ ".repeat(1_500), " }".repeat(1_500));
            decide_bash(ws.path(), &policy(EVERYDAY_POLICY), &cmd)
        }
        "cds-operands" => {
            let ws = workspace(0, 0);
            let cds: String = (0..40).map(|i| format!("cd d{i} || true; ")).collect();
            let cmd = fill(&format!("{cds}cat"), " a/b", 10_000);
            decide_bash(ws.path(), &policy(EVERYDAY_POLICY), &cmd)
        }
        "cds-away" => {
            let cmd = cds_away();
            decide_bash(workspace(0, 0).path(), &policy(EVERYDAY_POLICY), &cmd)
        }
        "curl-output-dirs" => {
            let ws = workspace(0, 0);
            let cmd = fill("curl -: https://x", " --output-dir d -o f", 10_000);
            decide_bash(ws.path(), &policy(EVERYDAY_POLICY), &cmd)
        }
        "git-c-chain" => {
            let ws = workspace(0, 0);
            let cmd = fill("git", " -C a", 9_990) + " rm x";
            decide_bash(ws.path(), &policy(EVERYDAY_POLICY), &cmd)
        }
        "find-roots-braces" => {
            let ws = workspace(0, 0);
            let roots: String = (0..300).map(|i| format!(" r{i}")).collect();
            let cmd = fill(&format!("find{roots} -exec cat"), " {}", 9_990) + " \\;";
            decide_bash(ws.path(), &policy(EVERYDAY_POLICY), &cmd)
        }
        "star-big-folder" => {
            let ws = workspace(10_000, 0);
            let cmd = fill("cat", " *", 10_000);
            decide_bash(ws.path(), &policy(EVERYDAY_POLICY), &cmd)
        }
        "star-dotdot-star" => {
            let ws = workspace(0, 1_000);
            let cmd = fill("cat", " */../*", 10_000);
            decide_bash(ws.path(), &policy(EVERYDAY_POLICY), &cmd)
        }
        "long-path" => {
            let ws = workspace(0, 0);
            let mut y =
                String::from("default: deny\nrules:\n  - allow: [\"Bash(cat:*)\"]\n  - deny:\n");
            for i in 0..1_000 {
                y.push_str(&format!("      - \"Read(a/b{i}/**)\"\n"));
            }
            let cmd = fill("cat ", "a/", 10_000);
            decide_bash(ws.path(), &policy(&y), &cmd)
        }
        "star-words-deny" => {
            let ws = workspace(0, 0);
            let y = "default: allow\nrules:\n  - deny: [\"Bash(* a * a * a * a * a * z)\"]\n";
            let cmd = fill("echo", " a", 10_000);
            decide_bash(ws.path(), &policy(y), &cmd)
        }
        "substitutions" => {
            let ws = workspace(0, 0);
            let unit = format!("echo {}x{};\n", "$(echo ".repeat(11), ")".repeat(11));
            let cmd = fill("", &unit, 10_000);
            decide_bash(ws.path(), &policy(EVERYDAY_POLICY), &cmd)
        }
        "heredoc-cut-short" => {
            let ws = workspace(0, 0);
            let cmd = fill("", "cat <<'' a; ", 9_990) + "$(<< ($(";
            decide_bash(ws.path(), &policy(EVERYDAY_POLICY), &cmd)
        }
        "heredoc-1mb" => {
            let ws = workspace(0, 0);
            let body = fill(
                "",
                "print(\"(x) {y} $HOME\")\n",
                runner_policy::shell::MAX_DATA_CHARS - 8,
            );
            let cmd = format!("cat <<'EOF' > gen.py\n{body}EOF\npython3 gen.py");
            decide_bash(ws.path(), &policy(HEREDOC_POLICY), &cmd)
        }
        "heredoc-1mb-open" => {
            let ws = workspace(0, 0);
            let body = fill(
                "",
                "print(\"(x) {y}\")\n",
                runner_policy::shell::MAX_DATA_CHARS - 8,
            );
            let cmd = format!("python3 <<'EOF'\n{body}");
            let all = every_backstop();
            decide_bash(ws.path(), &policy(HEREDOC_POLICY).with_backstops(all), &cmd)
        }
        "heredocs-10k-lines" => {
            let ws = workspace(0, 0);
            let cmd: String = (0..2_500)
                .map(|i| format!("cat <<EOF > f{i}\nline {i}\nEOF\n"))
                .collect();
            decide_bash(ws.path(), &policy(HEREDOC_POLICY), &cmd)
        }
        "code-after-heredoc-1mb" => {
            let ws = workspace(0, 0);
            let code = fill("", "echo a b;", runner_policy::shell::MAX_DATA_CHARS);
            let cmd = format!("cat <<EOF > f\nx\nEOF\n{code}");
            decide_bash(ws.path(), &policy(HEREDOC_POLICY), &cmd)
        }
        "jobs-nested" => {
            let ws = workspace(0, 0);
            let mut inner = String::from("$(nproc)");
            for _ in 0..11 {
                inner = format!("$(expr {inner} + 1)");
            }
            let cmd = fill("", &format!("make -j{inner};\n"), 10_000);
            decide_bash(ws.path(), &policy(HEREDOC_POLICY), &cmd)
        }
        "rules-10k-load" => timed_load(&many_rules(10_000)),
        "rules-10k-decide" => {
            let ws = workspace(0, 0);
            decide_bash(
                ws.path(),
                &policy(&many_rules(10_000)),
                "cat src/a.rs | tail -n 5",
            )
        }
        "deny-10k-one-program" => {
            // Every rule names the command's program, so none is passed
            // over on its first word: each is matched on the words.
            let ws = workspace(0, 0);
            let mut y = String::from("default: allow\nrules:\n  - deny:\n");
            for i in 0..10_000 {
                y.push_str(&format!("      - \"Bash(git push{i}:*)\"\n"));
            }
            let cmd = fill("git log ", "a ", 10_000);
            decide_bash(ws.path(), &policy(&y), &cmd)
        }
        "opaque-list-backstops" => {
            let ws = workspace(0, 0);
            let yaml = many_rules(10_000) + "  - allow: [\"Bash(python3:*)\"]\n";
            let all = every_backstop();
            let cmd = "python3 -c x; ".repeat(64);
            decide_bash(ws.path(), &policy(&yaml).with_backstops(all), &cmd)
        }
        "opaque-timeout-backstops" => {
            let ws = workspace(0, 0);
            let yaml =
                many_rules(10_000) + "  - allow: [\"Bash(python3:*)\", \"Bash(timeout:*)\"]\n";
            let all = every_backstop();
            let cmd = "cd d && A=1 timeout 5 python3 -c x; ".repeat(32);
            decide_bash(ws.path(), &policy(&yaml).with_backstops(all), &cmd)
        }
        "opaque-shells-backstops" => {
            let ws = workspace(0, 0);
            let yaml = many_rules(10_000)
                + "  - allow: [\"Bash(python3:*)\", \"Bash(bash:*)\", \"Bash(sh:*)\"]\n";
            let all = every_backstop();
            let inner = "python3 -c x; ".repeat(61);
            let cmd = format!("bash -c \"sh -c \\\"bash -c '{inner}'\\\"\"");
            decide_bash(ws.path(), &policy(&yaml).with_backstops(all), &cmd)
        }
        "lint-10k" => {
            let yaml = many_rules(10_000);
            let pf: runner_policy::PolicyFile = serde_saphyr::from_str(&yaml).unwrap();
            let mut found = 0;
            let times: Vec<Duration> = (0..rounds())
                .map(|_| {
                    let t = Instant::now();
                    found = runner_policy::lint_policy(&pf, Path::new("bench.yaml")).len();
                    t.elapsed()
                })
                .collect();
            (format!("{found} findings"), median(times))
        }
        "fetch-rules-20k" => {
            let mut y = String::from("default: deny\nrules:\n  - allow:\n");
            for i in 0..MAX_RULES - 1 {
                y.push_str(&format!(
                    "      - \"Fetch(*.h{i}.test/docs/**/v{i}/*.html)\"\n"
                ));
            }
            y.push_str("      - \"Fetch(127.0.0.0/8)\"\n");
            let set = policy(&y);
            let sig = runner_policy::Signature::fetch(
                "127.0.0.1",
                Some(8080),
                &fill("/", "docs/", 10_000),
            );
            timed(&|| {
                let d = set.decide("web_fetch", runner_policy::Risk::Medium, vec![sig.clone()]);
                format!("{:?}", d.verdict).to_lowercase()
            })
        }
        "fetch-glob-stars" => {
            let y = format!(
                "default: deny\nrules:\n  - allow: [\"Fetch(docs.test/{})\"]\n",
                "*a".repeat(6_000)
            );
            match parse_policy_yaml(&y, Path::new("bench.yaml")) {
                Err(es) => (format!("load error: {}", es[0].message), timed_load(&y).1),
                Ok(p) => {
                    let set = PolicySet::new(vec![p]);
                    let sig =
                        runner_policy::Signature::fetch("docs.test", None, &"ab".repeat(5_000));
                    timed(&|| {
                        let d =
                            set.decide("web_fetch", runner_policy::Risk::Medium, vec![sig.clone()]);
                        format!("{:?}", d.verdict).to_lowercase()
                    })
                }
            }
        }
        "network-20k" => {
            let mut y = String::from("network:\n  allow:\n");
            for i in 0..MAX_RULES / 2 {
                y.push_str(&format!("    - \"*.h{i}.test\"\n"));
            }
            y.push_str("  deny:\n");
            for i in 0..MAX_RULES / 2 {
                y.push_str(&format!(
                    "    - \"10.{}.{}.0/24\"\n",
                    i / 256 % 256,
                    i % 256
                ));
            }
            let set = policy(&y);
            let ip: std::net::IpAddr = "93.184.216.34".parse().unwrap();
            timed(&|| {
                let d = set.decide_connection("docs.example.org", 443);
                let a = set.network_admits_address(ip, 443);
                format!(
                    "{} / address {}",
                    if d.allow { "allow" } else { "deny" },
                    if a.is_ok() { "admitted" } else { "refused" }
                )
            })
        }
        "deep-path-rule" => {
            let y = format!(
                "default: deny\nrules:\n  - deny: [\"Read({})\"]\n",
                ["a"; 5_000].join("/")
            );
            timed_load(&y)
        }
        other => panic!("unknown shape {other}"),
    };
    println!(
        "{verdict}\t{:.2} ms\t{}",
        time.as_secs_f64() * 1000.0,
        peak_memory()
    );
}
