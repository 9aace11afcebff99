//! The attack corpora (tests/fixtures/policy/corpus.yaml, the tools and the
//! shell; programs.yaml, the program models): every row is a tool call, the
//! decision it must get under the corpus's policy, and what must decide it
//! (the rule, `default deny`, `opaque`, `outside`, `git`, `refused` or `low
//! risk`), so that no row passes for the wrong reason. Each row is decided
//! twice: through the library's gate (`decide_call`, which a run uses) and
//! by the `runner check` binary.

use std::collections::BTreeMap;
use std::path::Path;

use runner::engine::pipeline::decide_call;
use runner::tools::{Registry, ToolContext, ToolErrorKind};
use runner::workspace::Workspace;
use runner_policy::{Backstops, Decision, PolicySet, load_policy_file};
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Corpus {
    /// The policy file, beside the corpus.
    policy: String,
    workspace: Layout,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Layout {
    dirs: Vec<String>,
    files: BTreeMap<String, String>,
    links: BTreeMap<String, String>,
}

/// The size the issue asks of the corpus: 250 cases, 150 of them attacks,
/// every class present.
#[test]
fn corpus_size_and_classes() {
    let mut total = 0;
    let mut attacks = 0;
    let mut classes = std::collections::BTreeSet::new();
    for name in CORPORA {
        let (c, _dir) = load(name);
        total += c.cases.len();
        attacks += c.cases.iter().filter(|k| k.expect == "deny").count();
        classes.extend(c.cases.iter().filter_map(|k| k.class.clone()));
    }
    assert!(
        total >= 250 && attacks >= 150,
        "{total} cases, {attacks} attacks"
    );
    for class in ["plain", "language", "writer", "runtime", "folder", "git"] {
        assert!(classes.contains(class), "no {class} case");
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    /// Shorthand for `tool: bash, args: {command: ...}`.
    bash: Option<String>,
    tool: Option<String>,
    args: Option<Value>,
    expect: String,
    by: String,
    /// The attack class, for the classes of the program models.
    #[serde(default)]
    class: Option<String>,
}

impl Case {
    fn call(&self, ws: &Path) -> (String, Value) {
        let (tool, args) = match (&self.bash, &self.tool, &self.args) {
            (Some(c), None, None) => ("bash".to_string(), serde_json::json!({ "command": c })),
            (None, Some(t), Some(a)) => (t.clone(), a.clone()),
            _ => panic!("a case is `bash: COMMAND` or `tool:` with `args:`"),
        };
        let args = serde_json::to_string(&args)
            .unwrap()
            .replace("$WS", &ws.display().to_string());
        (tool, serde_json::from_str(&args).unwrap())
    }

    fn label(&self) -> String {
        let class = self
            .class
            .as_deref()
            .map(|c| format!("[{c}] "))
            .unwrap_or_default();
        match &self.bash {
            Some(c) => format!("{class}bash {c:?}"),
            None => format!(
                "{class}{} {}",
                self.tool.as_deref().unwrap_or(""),
                self.args.as_ref().unwrap()
            ),
        }
    }
}

/// What decided: the rule when one did, else the kind of decision.
fn decided_by(d: &Decision) -> String {
    if let Some(r) = &d.rule {
        return r.clone();
    }
    let reason = d.reason.as_deref().unwrap_or("");
    if reason.contains("cannot be checked safely") {
        "opaque"
    } else if reason.contains("is outside the workspace; only an absolute") {
        "outside"
    } else if reason.contains("writes into .git") {
        "git"
    } else if reason.contains("is a private address") {
        "private"
    } else if d.policy.is_none() {
        "refused"
    } else if matches!(reason, "low risk" | "nothing to check") {
        "low risk"
    } else {
        "?"
    }
    .to_string()
}

pub(crate) fn verdict(d: &Decision) -> &'static str {
    match d.verdict {
        runner_policy::Verdict::Allow => "allow",
        runner_policy::Verdict::Deny => "deny",
    }
}

pub(crate) fn fixtures() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/policy")
}

const CORPORA: &[&str] = &["corpus.yaml", "programs.yaml"];

fn load(name: &str) -> (Corpus, tempfile::TempDir) {
    let text = std::fs::read_to_string(fixtures().join(name)).unwrap();
    let corpus: Corpus = serde_saphyr::from_str(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for d in &corpus.workspace.dirs {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    for (f, text) in &corpus.workspace.files {
        std::fs::write(root.join(f), text).unwrap();
    }
    for (link, target) in &corpus.workspace.links {
        std::os::unix::fs::symlink(target, root.join(link)).unwrap();
    }
    (corpus, dir)
}

fn report(failures: Vec<String>, total: usize) {
    assert!(total > 100, "only {total} cases");
    assert!(
        failures.is_empty(),
        "{} of {total} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn corpus_through_the_gate() {
    for name in CORPORA {
        let (failures, total) = gate(name, Backstops::default());
        report(failures, total);
    }
}

/// In a run with every backstop (Landlock, network off, read-denied files
/// untracked), every deny row is still denied, except where the backstops
/// make the deny moot, and only as README's "Two walls" states it:
///
/// - a recursive read under a `Read` deny that matches only beneath the
///   folder: the files it denies are not in the copy;
/// - one program's own code the analysis cannot see into (`sed 'e id'`,
///   `git -c core.pager=...`), allowed by the rule for that program, in a
///   policy whose every deny rule has a backstop.
///
/// A compound script or a program that runs others (`ls | xargs rm`) stays
/// denied (by the default instead of as opaque).
#[test]
fn corpus_deny_rows_hold_under_backstops() {
    let all = Backstops {
        reads: true,
        edits: true,
        confined: true,
        network_off: true,
        exec: false,
        history: true,
        private_tmp: false,
    };
    let mut moot = 0;
    for name in CORPORA {
        let (failures, total) = gate(name, all);
        let failures: Vec<String> = failures
            .into_iter()
            .filter(|f| {
                let first = f
                    .split_once("bash \"")
                    .and_then(|(_, rest)| rest.split([' ', '"']).next())
                    .unwrap_or("\0");
                let ok = (f.contains("expected deny") && f.contains(", got deny by"))
                    || (f.contains("expected deny by \"deny Read(") && f.contains("got allow"))
                    || (f.contains("expected deny by \"opaque\", got allow by \"allow Bash(")
                        && f.contains(&format!("got allow by \"allow Bash({first}"))
                        && f.contains("every deny rule has a backstop"))
                    // A login shell read as `-c`: confinement keeps its
                    // startup files from the agent (issue 42).
                    || (f.contains("expected deny by \"opaque\", got allow by \"allow Bash(")
                        && f.contains("startup files of the machine and user"));
                if ok && f.contains("got allow") {
                    moot += 1;
                    eprintln!("moot: {}", f.split(": Some(").next().unwrap_or(f));
                }
                !ok
            })
            .collect();
        report(failures, total);
    }
    eprintln!("{moot} deny rows made moot by the backstops");
    assert!(moot > 0);
}

/// The rows of corpus `name` the gate decides otherwise than they expect,
/// and how many rows it has.
fn gate(name: &str, backstops: Backstops) -> (Vec<String>, usize) {
    let (corpus, dir) = load(name);
    let ws = Workspace::new(dir.path()).unwrap();
    let policy = load_policy_file(&fixtures().join(&corpus.policy)).unwrap();
    let set = PolicySet::new(vec![policy]).with_backstops(backstops);
    let registry = Registry::builtin();
    let ctx = ToolContext::new(ws.clone());
    let mut failures = Vec::new();
    for case in &corpus.cases {
        let (tool, args) = case.call(ws.root());
        let t = registry.get(&tool).unwrap();
        let d = match decide_call(t.as_ref(), &args, &set, &ctx) {
            Ok((_, d)) => d,
            Err(e) if e.kind == ToolErrorKind::Permission => Decision::refused(e.message),
            Err(e) => {
                failures.push(format!("{}: invalid: {}", case.label(), e.message));
                continue;
            }
        };
        let (got, by) = (verdict(&d), decided_by(&d));
        if got != case.expect || by != case.by {
            failures.push(format!(
                "{}: expected {} by {:?}, got {got} by {by:?}: {:?}",
                case.label(),
                case.expect,
                case.by,
                d.reason
            ));
        }
    }
    (failures, corpus.cases.len())
}

/// `runner check` gives the same decision, by the same rule, as the gate,
/// and prints it as the serialised `Decision`.
#[test]
fn corpus_through_runner_check() {
    for name in CORPORA {
        check(name);
    }
}

fn check(name: &str) {
    let (corpus, dir) = load(name);
    let root = dir.path().canonicalize().unwrap();
    let policy = fixtures().join(&corpus.policy);
    let mut failures = Vec::new();
    for case in &corpus.cases {
        let (tool, args) = case.call(&root);
        let out = assert_cmd::Command::cargo_bin("runner")
            .unwrap()
            .arg("check")
            .arg("--policy")
            .arg(&policy)
            .arg("--workspace")
            .arg(&root)
            .arg(&tool)
            .arg(args.to_string())
            .output()
            .unwrap();
        let d: Decision = match serde_json::from_slice(&out.stdout) {
            Ok(d) => d,
            Err(e) => {
                failures.push(format!(
                    "{}: not a Decision ({e}): {}{}",
                    case.label(),
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                ));
                continue;
            }
        };
        let code = out.status.code();
        let want_code = if case.expect == "allow" { 0 } else { 1 };
        let (got, by) = (verdict(&d), decided_by(&d));
        if got != case.expect || by != case.by || code != Some(want_code) {
            failures.push(format!(
                "{}: expected {} by {:?} (exit {want_code}), got {got} by {by:?} (exit {code:?})",
                case.label(),
                case.expect,
                case.by,
            ));
        }
    }
    report(failures, corpus.cases.len());
}

/// An absolute program path matches the rules written for its name when
/// PATH finds that same file (`/usr/bin/cat` for `cat`), and not when it
/// is another file of the same name.
#[test]
fn an_absolute_program_path_is_its_name_only_when_path_finds_it() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    let ctx = ToolContext::new(ws.clone());
    let registry = Registry::builtin();
    let bash = registry.get("bash").unwrap();
    let policy = dir.path().join("p.yaml");
    std::fs::write(
        &policy,
        "default: deny\nrules:\n  - allow: [\"Bash(cat:*)\"]\n",
    )
    .unwrap();
    let set = PolicySet::new(vec![load_policy_file(&policy).unwrap()]);
    let found = std::process::Command::new("sh")
        .args(["-c", "command -v cat"])
        .output()
        .unwrap();
    let cat = String::from_utf8(found.stdout).unwrap().trim().to_string();
    assert!(cat.starts_with('/'), "{cat}");
    let other = dir.path().join("bin/cat");
    std::fs::create_dir_all(other.parent().unwrap()).unwrap();
    std::fs::copy(&cat, &other).unwrap();
    for (program, want) in [(cat.as_str(), "allow"), (other.to_str().unwrap(), "deny")] {
        let args = serde_json::json!({ "command": format!("{program} p.yaml") });
        let d = match decide_call(bash.as_ref(), &args, &set, &ctx) {
            Ok((_, d)) => d,
            Err(e) => Decision::refused(e.message),
        };
        assert_eq!(verdict(&d), want, "{program}: {d:?}");
    }
}
