//! The ordinary-work corpora: commands a reviewer expects to run, decided
//! under two ordinary policies (tests/fixtures/policy/ordinary-team.yaml,
//! `default: allow` with a team's usual denies, and ordinary-build.yaml, a
//! build-tools allow list). `ordinary.yaml` holds commands from real CI
//! files and scripts; `agents.yaml` commands LLM agents ran. A false deny
//! is a command a reviewer expects allowed that the gate denies; a false
//! allow the other way round. The README's tables count both.

use std::collections::BTreeMap;

use runner::engine::pipeline::decide_call;
use runner::tools::{Registry, ToolContext};
use runner::workspace::Workspace;
use runner_policy::{Backstops, Decision, PolicySet, load_policy_file};
use serde::Deserialize;

use super::policy_corpus::{fixtures, verdict};

fn load(name: &str) -> Ordinary {
    let text = std::fs::read_to_string(fixtures().join(name)).unwrap();
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Ordinary {
    cases: Vec<OrdinaryCase>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OrdinaryCase {
    bash: String,
    /// Where the command comes from (a file of a crate in the registry).
    #[allow(dead_code)]
    source: String,
    /// The folder the command was written in (agents.yaml): the
    /// workspace stands there, so a path under it is a path in the
    /// workspace.
    #[serde(default)]
    root: Option<String>,
    /// What a reviewer expects under ordinary-team.yaml and
    /// ordinary-build.yaml.
    team: String,
    build: String,
}

/// Why the gate denied an ordinary command: the opaque reason or the rule,
/// in a few words (the causes the README counts).
fn false_deny_cause(d: &Decision) -> String {
    let reason = d.reason.as_deref().unwrap_or("");
    if let Some(rule) = &d.rule {
        if rule == "default deny" {
            return "a program the policy does not allow".into();
        }
        if reason.contains("/**)") {
            return format!("a recursive read or write under `{rule}`");
        }
        return rule.clone();
    }
    for (needle, cause) in [
        ("inline code", "inline interpreter code"),
        (
            "as a login or interactive shell",
            "a login or interactive shell",
        ),
        (
            "only known when the script runs",
            "a value only known at run time",
        ),
        ("git -c", "`git -c` with a key that runs programs"),
        ("outside the workspace", "a path outside the workspace"),
        (
            "changes what commands run",
            "a variable that changes what runs",
        ),
        ("reads its", "a program reading its script from stdin"),
        ("heredoc", "a program fed a heredoc"),
        ("`xargs` gives", "`xargs` before a program that takes files"),
    ] {
        if reason.contains(needle) {
            return cause.into();
        }
    }
    reason.chars().take(60).collect()
}

/// The ordinary-work corpus: commands from real CI files and scripts, each
/// decided under two ordinary policies; a false deny is a command a
/// reviewer expects allowed that the gate denies. The counts by cause are
/// printed (README, "Ordinary work"); the causes fixed by issue 35 must not
/// come back, and the total must not grow.
#[test]
fn ordinary_work_false_denies() {
    let corpus = load("ordinary.yaml");
    assert!(corpus.cases.len() >= 300, "{} cases", corpus.cases.len());
    // Decided as `runner check` does (no backstop).
    let check = false_decisions(&corpus, Backstops::default());
    // Issue 35's causes: none may come back. What is left is what the
    // analysis cannot see into (inline code, operands only known at run
    // time, `xargs`).
    for fixed in [
        "a program reading its script from stdin",
        "a variable that changes what runs",
        "a path outside the workspace",
        "a program the policy does not allow",
        "`git -c` with a key that runs programs",
    ] {
        assert!(!check.causes.contains_key(fixed), "{fixed}: {check:#?}");
    }
    check.denies_at_most(ORDINARY_FALSE_DENIES, "runner check");
    // As a run with every backstop but the supervisor does (Landlock,
    // read-denied files untracked, network off): none, and inline code is
    // never the cause.
    let backed = Backstops {
        reads: true,
        edits: true,
        confined: true,
        network_off: true,
        exec: false,
        history: true,
        private_tmp: false,
    };
    let run = false_decisions(&corpus, backed);
    run.denies_at_most(0, "network off");
    assert!(!run.has_cause(&["inline", "code"]), "{run:#?}");
    // Network on: the team's `Bash(git push:*)` has no backstop, so its
    // policy decides as `runner check` does; the build policy (no deny on
    // a program) as with every backstop.
    let network_on = Backstops {
        network_off: false,
        ..backed
    };
    false_decisions(&corpus, network_on)
        .denies_at_most(ORDINARY_FALSE_DENIES_NETWORK_ON, "network on");
    // With the supervisor deciding execs, `Bash(git push:*)` has its wall
    // with the network on too: no false deny is left.
    let supervised = Backstops {
        exec: true,
        ..network_on
    };
    false_decisions(&corpus, supervised).denies_at_most(0, "the supervisor");
}

/// The false decisions on a corpus under the two ordinary policies: the
/// false denies (a reviewer expects allow, the gate denies), each one and
/// counted by cause; and the false allows (a reviewer expects deny, the
/// gate allows).
#[derive(Debug)]
struct Tally {
    causes: BTreeMap<String, usize>,
    denied: Vec<String>,
    allowed: Vec<String>,
}

impl Tally {
    /// At most `n` false denies, decided as `how` says.
    fn denies_at_most(&self, n: usize, how: &str) {
        let count = self.denied.len();
        assert!(
            count <= n,
            "{how}: {count} false denies:\n{}",
            self.denied.join("\n")
        );
    }

    /// No row the reviewer denies is allowed.
    fn allows_no_denied_row(&self) {
        assert!(
            self.allowed.is_empty(),
            "false allows:\n{}",
            self.allowed.join("\n")
        );
    }

    /// Whether some cause contains one of `needles`.
    fn has_cause(&self, needles: &[&str]) -> bool {
        self.causes
            .keys()
            .any(|c| needles.iter().any(|n| c.contains(n)))
    }
}

/// [`Tally`] of `corpus` decided with `backstops`; printed.
fn false_decisions(corpus: &Ordinary, backstops: Backstops) -> Tally {
    let dir = tempfile::tempdir().unwrap();
    for d in ["src", "tests", "target", ".github/workflows"] {
        std::fs::create_dir_all(dir.path().join(d)).unwrap();
    }
    std::fs::write(dir.path().join("Cargo.toml"), "[package]\n").unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    let ctx = ToolContext::new(ws.clone());
    let registry = Registry::builtin();
    let bash = registry.get("bash").unwrap();
    let here = ws.root().to_str().unwrap().to_string();
    let mut tally = Tally {
        causes: BTreeMap::new(),
        denied: Vec::new(),
        allowed: Vec::new(),
    };
    for (policy, pick) in [
        (
            "ordinary-team.yaml",
            (|c: &OrdinaryCase| &c.team) as fn(&OrdinaryCase) -> &String,
        ),
        ("ordinary-build.yaml", |c: &OrdinaryCase| &c.build),
    ] {
        let set = PolicySet::new(vec![load_policy_file(&fixtures().join(policy)).unwrap()])
            .with_backstops(backstops);
        for case in &corpus.cases {
            let command = match &case.root {
                Some(root) => case.bash.replace(root.as_str(), &here),
                None => case.bash.clone(),
            };
            let args = serde_json::json!({ "command": command });
            let d = match decide_call(bash.as_ref(), &args, &set, &ctx) {
                Ok((_, d)) => d,
                Err(e) => Decision::refused(e.message),
            };
            match (pick(case).as_str(), verdict(&d)) {
                ("allow", "deny") => {
                    let cause = false_deny_cause(&d);
                    tally
                        .denied
                        .push(format!("{policy}: {:?}: {cause}", case.bash));
                    *tally.causes.entry(cause).or_default() += 1;
                }
                ("deny", "allow") => tally.allowed.push(format!("{policy}: {:?}", case.bash)),
                _ => {}
            }
        }
    }
    eprintln!(
        "{} false denies and {} false allows in {} decisions ({backstops:?}):",
        tally.denied.len(),
        tally.allowed.len(),
        2 * corpus.cases.len()
    );
    for (cause, n) in &tally.causes {
        eprintln!("  {n:>4}  {cause}");
    }
    for l in tally.denied.iter().chain(&tally.allowed) {
        eprintln!("    {l}");
    }
    tally
}

/// The false denies left on the ordinary corpus (README, "Ordinary work"):
/// what the backstops of issue 29 are for.
const ORDINARY_FALSE_DENIES: usize = 23;

/// The same with the network on (the default).
const ORDINARY_FALSE_DENIES_NETWORK_ON: usize = 16;

/// The agent-written corpus (issue 42): 500+ commands LLM agents ran,
/// decided as `runner check` does and as runs with backstops do. No deny
/// row may be allowed, however decided; the false denies are counted by
/// cause (README, "Agent-written commands"). With every backstop, none of
/// the causes the issue names (login shells, inline code, heredoc
/// programs, `timeout` and `cd` before them) may be left.
#[test]
fn agent_written_false_denies() {
    let corpus = load("agents.yaml");
    assert!(corpus.cases.len() >= 500, "{} cases", corpus.cases.len());
    // `runner check`: a login shell is opaque (its startup files may be
    // the agent's), and a recursive read meets `Read(.env)`.
    let check = false_decisions(&corpus, Backstops::default());
    check.allows_no_denied_row();
    check.denies_at_most(AGENT_FALSE_DENIES[0], "runner check");
    // A run with Landlock, network on: the team's `Bash(git push:*)` has no
    // backstop, so its inline code stays refused; login shells do not.
    let run = false_decisions(&corpus, AGENT_RUN);
    run.allows_no_denied_row();
    run.denies_at_most(AGENT_FALSE_DENIES[1], "network on");
    assert!(!run.has_cause(&["login"]), "{run:#?}");
    // Every backstop, the supervisor's included.
    let run = false_decisions(&corpus, AGENT_RUN_EVERY);
    run.allows_no_denied_row();
    run.denies_at_most(AGENT_FALSE_DENIES[2], "every backstop");
    assert!(
        !run.has_cause(&["login", "inline", "heredoc", "run time", "outside"]),
        "{run:#?}"
    );
}

/// The backstops of a run with Landlock and the network on, as the
/// agent-written corpora are decided.
const AGENT_RUN: Backstops = Backstops {
    reads: true,
    edits: true,
    confined: true,
    network_off: false,
    exec: false,
    history: true,
    private_tmp: false,
};

/// Every backstop, the supervisor's included.
const AGENT_RUN_EVERY: Backstops = Backstops {
    network_off: true,
    exec: true,
    ..AGENT_RUN
};

/// The false denies left on the agent-written corpus (README, "Agent-written
/// commands"), of 1,054 decisions: as `runner check` decides, in a run
/// with the network on (the team's `Bash(git push:*)` has no backstop:
/// inline code and heredoc programs stay refused), and with every
/// backstop: none.
const AGENT_FALSE_DENIES: [usize; 3] = [903, 17, 0];

/// The second agent-written corpus (issue 73 item 8): 353 commands the
/// Cursor agent ran, a harness the first corpus did not hold, labelled
/// before the runner decided any. Decided as the first is; no deny row
/// may be allowed as `runner check` decides, and the false denies are
/// counted (policies.md, "Agent-written commands").
#[test]
fn cursor_agent_false_denies() {
    let corpus = load("cursor-agents.yaml");
    assert!(corpus.cases.len() >= 300, "{} cases", corpus.cases.len());
    let check = false_decisions(&corpus, Backstops::default());
    check.allows_no_denied_row();
    check.denies_at_most(CURSOR_FALSE_DENIES[0], "runner check");
    // In a run, the one deny row allowed is moot: a recursive grep that
    // names `*.env*` files, whose `.env` the read backstop leaves out of
    // the copy.
    let moot = |t: &Tally| t.allowed.iter().all(|row| row.contains("*.env*"));
    let run = false_decisions(&corpus, AGENT_RUN);
    run.denies_at_most(CURSOR_FALSE_DENIES[1], "network on");
    assert!(moot(&run), "{run:#?}");
    let run = false_decisions(&corpus, AGENT_RUN_EVERY);
    run.denies_at_most(CURSOR_FALSE_DENIES[2], "every backstop");
    assert!(moot(&run), "{run:#?}");
}

/// The false denies left on the Cursor corpus, of 706 decisions: as
/// `runner check` decides (`git add` of named files read as a recursive
/// read that meets `Read(.env)`, inline code), in a run with the network
/// on, and with every backstop (policies.md, "Agent-written commands").
const CURSOR_FALSE_DENIES: [usize; 3] = [22, 4, 1];
