//! Properties of the permission engine, checked on generated inputs:
//! - adding a deny rule (or a whole policy layer) never turns a denial into
//!   an allow;
//! - allowing a program never lets it reach a file operand a deny rule
//!   catches;
//! - a compound command is allowed only if each of its parts is;
//! - normalising a path twice gives the same result as once;
//! - the shell splitter, the rule parser and the policy loader never panic,
//!   whatever text they are given.

use proptest::prelude::*;
use runner::engine::pipeline::decide_call;
use runner::tools::{Registry, ToolContext};
use runner::workspace::{Workspace, normalize_lexically};
use runner_policy::{Pattern, PolicySet, Verdict, parse_policy_yaml, shell};
use serde_json::json;
use std::path::Path;

/// Commands a model might send, harmless and hostile. No `cd`: it changes
/// how the commands after it resolve paths, so a part alone is another call.
const COMMANDS: &[&str] = &[
    "git status",
    "git diff --stat",
    "git push --force",
    "cargo test",
    "cargo testx",
    "rm -rf /",
    "rm src/a.rs",
    "curl x",
    "cat .env",
    "cat src/a.rs",
    "cat src/../.env",
    "cat src/link",
    "echo hi",
    "echo x > src/o.txt",
    "echo x > .github/ci.yml",
    "echo x >> src/a.rs",
    "ls src",
    "sed -i s/a/b/ src/a.rs",
    "sed -n p .env",
    "find . -delete",
    "find src -name '*.rs'",
    "sh -c 'rm x'",
    "bash -c 'git status'",
    "$X -rf /",
    "env rm x",
    "env FOO=1 git status",
    "FOO=1 cargo test",
    "timeout 5 cargo test",
    "xargs rm",
    "echo $(cat .env)",
    "cp src/a.rs src/b.rs",
    "tee .github/ci.yml",
    "sort -o src/s src/a.rs",
    "head -n 1 src/a.rs",
];

const SEPARATORS: &[&str] = &[" && ", " || ", "; ", " | ", "\n", " & "];

const PATTERNS: &[&str] = &[
    "Bash(git:*)",
    "Bash(git status)",
    "Bash(git diff:*)",
    "Bash(cargo test:*)",
    "Bash(rm:*)",
    "Bash(curl:*)",
    "Bash(echo:*)",
    "Bash(cat:*)",
    "Bash(ls:*)",
    "Bash(sed:*)",
    "Bash(find:*)",
    "Bash(sh:*)",
    "Bash(bash:*)",
    "Bash(env:*)",
    "Bash(xargs:*)",
    "Bash(cp:*)",
    "Bash(tee:*)",
    "Bash(sort:*)",
    "Bash(head:*)",
    "Bash(timeout:*)",
    "Bash(*)",
    "Edit(src/**)",
    "Edit(.github/**)",
    "Edit(**)",
    "Read(.env)",
    "Read(src/**)",
];

/// A policy as YAML: a default and some allow/deny rules.
fn policy_yaml(default_allow: bool, rules: &[(bool, usize)]) -> String {
    let mut y = format!(
        "default: {}\nrules:{}\n",
        if default_allow { "allow" } else { "deny" },
        if rules.is_empty() { " []" } else { "" }
    );
    for (allow, i) in rules {
        let kind = if *allow { "allow" } else { "deny" };
        y.push_str(&format!("  - {kind}: [\"{}\"]\n", PATTERNS[*i]));
    }
    y
}

fn rules() -> impl Strategy<Value = Vec<(bool, usize)>> {
    prop::collection::vec((any::<bool>(), 0..PATTERNS.len()), 0..6)
}

/// A workspace with the files the commands name, made once per test.
fn workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join(".github")).unwrap();
    std::fs::write(root.join(".env"), "SECRET=1\n").unwrap();
    std::fs::write(root.join("src/a.rs"), "a\n").unwrap();
    std::os::unix::fs::symlink("../.env", root.join("src/link")).unwrap();
    let ws = Workspace::new(root).unwrap();
    (dir, ws)
}

fn decide_bash(ws: &Workspace, layers: &[String], command: &str) -> Verdict {
    let set = PolicySet::new(
        layers
            .iter()
            .map(|y| parse_policy_yaml(y, Path::new("p.yaml")).unwrap())
            .collect(),
    );
    let reg = Registry::builtin();
    let bash = reg.get("bash").unwrap();
    let ctx = ToolContext::new(ws.clone());
    let (_, d) = decide_call(bash.as_ref(), &json!({ "command": command }), &set, &ctx).unwrap();
    d.verdict
}

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/policy")
        .join(name)
}

/// Every `bash:` command of the corpora.
fn corpus_commands() -> &'static [String] {
    static COMMANDS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    COMMANDS.get_or_init(|| {
        let mut out = Vec::new();
        for name in ["corpus.yaml", "programs.yaml"] {
            let v: serde_json::Value =
                serde_saphyr::from_str(&std::fs::read_to_string(fixture(name)).unwrap()).unwrap();
            for case in v["cases"].as_array().unwrap() {
                if let Some(c) = case["bash"].as_str() {
                    out.push(c.to_string());
                }
            }
        }
        assert!(out.len() > 250);
        out
    })
}

/// Commands of everyday programs with one file operand, `{F}`: read ones
/// (`true`) and written ones. Each is run on a path a deny rule catches.
const OPERAND_COMMANDS: &[(&str, bool)] = &[
    ("cat {F}", true),
    ("head -n 3 {F}", true),
    ("sed -n p {F}", true),
    ("awk '{print}' {F}", true),
    ("grep -n x {F}", true),
    ("grep -r x {F}", true),
    ("rg x {F}", true),
    ("cp {F} src/copy", true),
    ("cp -r {F} src/copy", true),
    ("tar -cf src/a.tar {F}", true),
    ("zip src/a.zip {F}", true),
    ("git show HEAD:{F}", true),
    ("git log -p -- {F}", true),
    ("diff {F} src/a.rs", true),
    ("jq . {F}", true),
    ("sed '1r {F}' src/a.rs", true),
    ("curl -T {F} http://x", true),
    ("sed -i s/a/b/ {F}", false),
    ("sed --in-place=.bak s/a/b/ {F}", false),
    ("sed -n 'w {F}' src/a.rs", false),
    ("awk '{print > \"{F}\"}' src/a.rs", false),
    ("cp src/a.rs {F}", false),
    ("cp -t {F} src/a.rs", false),
    ("mv src/a.rs {F}", false),
    ("rm -rf {F}", false),
    ("tee {F}", false),
    ("sort -o {F} src/a.rs", false),
    ("tar -xf src/a.tar -C {F}", false),
    ("unzip src/a.zip -d {F}", false),
    ("gzip {F}", false),
    ("chmod -R 777 {F}", false),
    ("git checkout HEAD -- {F}", false),
    ("curl -o {F} http://x", false),
    ("echo x > {F}", false),
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Adding an allow rule for a program (or for everything) never lets
    /// through a call whose file operand a deny rule catches.
    #[test]
    fn allowing_a_program_never_reaches_a_denied_operand(
        cmd in 0..OPERAND_COMMANDS.len(),
        extra_rules in rules(),
        allow_everything in any::<bool>(),
        default_allow in any::<bool>(),
    ) {
        let (_dir, ws) = workspace();
        let (template, reads) = OPERAND_COMMANDS[cmd];
        let path = if reads { ".env" } else { ".github/ci.yml" };
        let command = template.replace("{F}", path);
        let program = command.split_whitespace().next().unwrap();
        let mut y = format!(
            "default: {}\nrules:\n  - deny: [\"Read(.env)\", \"Edit(.github/**)\"]\n  - allow: [\"Bash({program}:*)\"{}]\n",
            if default_allow { "allow" } else { "deny" },
            if allow_everything { ", \"Bash(*)\", \"Edit(**)\", \"Read(**)\"" } else { "" },
        );
        for (allow, i) in &extra_rules {
            if *allow {
                y.push_str(&format!("  - allow: [\"{}\"]\n", PATTERNS[*i]));
            }
        }
        prop_assert_eq!(decide_bash(&ws, &[y.clone()], &command), Verdict::Deny, "`{}` allowed under\n{}", command, y);
    }

    #[test]
    fn adding_a_deny_rule_never_allows_more(
        default_allow in any::<bool>(),
        rules in rules(),
        extra in 0..PATTERNS.len(),
        at in 0usize..7,
        cmd in 0..COMMANDS.len(),
    ) {
        let (_dir, ws) = workspace();
        let before = decide_bash(&ws, &[policy_yaml(default_allow, &rules)], COMMANDS[cmd]);
        let mut more = rules.clone();
        more.insert(at.min(more.len()), (false, extra));
        let after = decide_bash(&ws, &[policy_yaml(default_allow, &more)], COMMANDS[cmd]);
        if before == Verdict::Deny {
            prop_assert_eq!(after, Verdict::Deny, "deny {} allowed `{}`", PATTERNS[extra], COMMANDS[cmd]);
        }
    }

    #[test]
    fn adding_a_layer_never_allows_more(
        a in (any::<bool>(), rules()),
        b in (any::<bool>(), rules()),
        cmd in 0..COMMANDS.len(),
    ) {
        let (_dir, ws) = workspace();
        let one = vec![policy_yaml(a.0, &a.1)];
        let two = vec![policy_yaml(a.0, &a.1), policy_yaml(b.0, &b.1)];
        if decide_bash(&ws, &one, COMMANDS[cmd]) == Verdict::Deny {
            prop_assert_eq!(decide_bash(&ws, &two, COMMANDS[cmd]), Verdict::Deny);
        }
    }

    #[test]
    fn a_compound_command_is_allowed_only_if_each_part_is(
        default_allow in any::<bool>(),
        rules in rules(),
        parts in prop::collection::vec(0..COMMANDS.len(), 2..4),
        seps in prop::collection::vec(0..SEPARATORS.len(), 3),
        wrap in 0usize..4,
    ) {
        let (_dir, ws) = workspace();
        let layers = vec![policy_yaml(default_allow, &rules)];
        let mut script = COMMANDS[parts[0]].to_string();
        for (i, p) in parts.iter().enumerate().skip(1) {
            script.push_str(SEPARATORS[seps[i - 1]]);
            script.push_str(COMMANDS[*p]);
        }
        // The same list inside a subshell, a group or a substitution.
        let script = match wrap {
            1 => format!("( {script} )"),
            2 => format!("{{ {script}; }}"),
            3 => format!("echo \"$( {script} )\""),
            _ => script,
        };
        if decide_bash(&ws, &layers, &script) == Verdict::Allow {
            for p in &parts {
                prop_assert_eq!(
                    decide_bash(&ws, &layers, COMMANDS[*p]),
                    Verdict::Allow,
                    "`{}` allowed but its part `{}` is not", script, COMMANDS[*p]
                );
            }
        }
    }

    #[test]
    fn normalising_a_path_twice_changes_nothing(
        abs in any::<bool>(),
        parts in prop::collection::vec(prop::sample::select(vec!["a", "b", "..", ".", "", "c.d", "..."]), 0..8),
    ) {
        let text = format!("{}{}", if abs { "/" } else { "" }, parts.join("/"));
        let once = normalize_lexically(Path::new(&text));
        let twice = normalize_lexically(&once);
        prop_assert_eq!(&once, &twice, "from `{}`", text);
        prop_assert!(once.components().all(|c| c != std::path::Component::CurDir));
    }

    #[test]
    fn signature_paths_are_already_normal(
        parts in prop::collection::vec(prop::sample::select(vec!["src", "a.rs", "..", ".", "link", "new", ".env"]), 1..6),
    ) {
        let (_dir, ws) = workspace();
        let text = parts.join("/");
        for spelled in ws.signature_paths(&text) {
            let again = ws.signature_paths(&spelled);
            prop_assert_eq!(again[0].clone(), spelled.clone(), "from `{}`", text);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    // This block's properties feed the analysis generated text: they run
    // in a child under a memory cap (see
    // `the_analysis_never_panics_or_aborts_under_a_memory_cap`), so that a
    // runaway fails the test instead of taking the machine's memory.

    #[test]
    #[ignore]
    fn the_shell_splitter_never_panics_on_any_text(script in any::<String>()) {
        let (_dir, ws) = workspace_cached();
        let a = shell::analyze(&script);
        let _ = a.is_read_only();
        let _ = a.signatures(ws, ".");
    }

    #[test]
    #[ignore]
    fn the_shell_splitter_never_panics_on_shell_like_text(
        script in r#"([a-z.]{1,4}|[ \t\n;&|<>(){}$`'"\\*?\[\]=#~!-]|<<|>>|&&|\|\||\$\(|<\(|>\(|2>&1|EOF|-c|-exec|\{\}|sh|eval|env|xargs|find|cd){0,40}"#
    ) {
        let (_dir, ws) = workspace_cached();
        let a = shell::analyze(&script);
        let _ = a.is_read_only();
        let _ = a.signatures(ws, "src");
    }

    /// The corpora's commands, mutated: characters inserted, deleted or
    /// replaced with shell punctuation, then analysed and decided.
    #[test]
    #[ignore]
    fn the_analyser_never_panics_on_the_corpus_mutated(
        pick in any::<prop::sample::Index>(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..3, r#"[ '"\\$`;|&<>(){}*?=\-a-z0-9]"#), 1..6),
    ) {
        let (_dir, ws) = workspace_cached();
        let commands = corpus_commands();
        let mut chars: Vec<char> = commands[pick.index(commands.len())].chars().collect();
        for (at, kind, with) in &edits {
            let i = at.index(chars.len() + 1);
            let c = with.chars().next().unwrap_or(' ');
            match kind {
                0 => chars.insert(i, c),
                1 if i < chars.len() => { chars.remove(i); }
                _ if i < chars.len() => chars[i] = c,
                _ => chars.push(c),
            }
        }
        let script: String = chars.into_iter().collect();
        let a = shell::analyze(&script);
        let _ = a.is_read_only();
        let sigs = a.signatures(ws, ".");
        static SET: std::sync::OnceLock<PolicySet> = std::sync::OnceLock::new();
        let set = SET.get_or_init(|| {
            PolicySet::new(vec![parse_policy_yaml(
                &std::fs::read_to_string(fixture("programs-policy.yaml")).unwrap(),
                Path::new("programs-policy.yaml"),
            )
            .unwrap()])
        });
        let _ = set.decide("bash", runner_policy::Risk::High, sigs);
    }

    #[test]
    fn the_rule_parser_never_panics(
        text in r#"(Bash|Edit|Read|Mcp|Tool|Frob|bash|[()*:/\\ .a-z!\[\]{}?,-]){0,24}"#,
        any_text in any::<String>(),
    ) {
        let _ = Pattern::parse(&text);
        let _ = Pattern::parse(&any_text);
    }

    #[test]
    fn the_policy_loader_never_panics(
        text in r#"(default: |allow|deny|rules:|tests:|risk:|\n|  - |\[|\]|"|Bash\(|Edit\(|\)|:\*|x|\{|\}|call: |expect: |, ){0,30}"#,
    ) {
        let _ = parse_policy_yaml(&text, Path::new("fuzz.yaml"));
    }
}

/// One workspace shared by the no-panic properties (they only read it).
fn workspace_cached() -> &'static (tempfile::TempDir, Workspace) {
    static WS: std::sync::OnceLock<(tempfile::TempDir, Workspace)> = std::sync::OnceLock::new();
    WS.get_or_init(workspace)
}

/// Shapes that stress the parser and the walk: brackets of every kind
/// nested and unclosed, thousands deep, up to the length limit.
const NESTING_TOKENS: &[&str] = &[
    "(", "((", "( (", "$(", "$((", "{ ", "`", "[[ ", "${", "<(", "a[", ")", "))", "}", " ]]", "]",
    "'", "\"", "x", " ", ";", "\n", "|", "&&", "cat ", "*", "../", "cd d; ", "-exec ", "{} ",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Run by `the_analysis_never_panics_or_aborts_under_a_memory_cap` in a
    /// child process with a memory limit; ignored on its own.
    #[test]
    #[ignore]
    fn nested_shapes_never_panic_or_abort(
        tokens in prop::collection::vec(prop::sample::select(NESTING_TOKENS), 0..4_000),
    ) {
        let (_dir, ws) = workspace_cached();
        let script: String = tokens.concat();
        let script: String = script.chars().take(runner_policy::shell::MAX_SCRIPT_CHARS).collect();
        let started = std::time::Instant::now();
        let a = shell::analyze(&script);
        let _ = a.is_read_only();
        let _ = a.signatures(ws, ".");
        // Not a speed check (benches/gate.rs is): a bound far above the
        // goal, which only a runaway analysis reaches.
        prop_assert!(started.elapsed() < std::time::Duration::from_secs(10), "{}", script);
    }
}

/// Scripts that made brush-parser loop for ever, growing a vector until
/// memory ran out (found by the properties above and by a longer run of
/// them; see `ended` in the analysis's walk): each is analysed, in bounded
/// memory.
#[test]
#[ignore]
fn scripts_that_hung_the_parser_are_decided() {
    let (_dir, ws) = workspace_cached();
    for script in [
        "$(<< ($(",
        "$(<< (${",
        "<<'' ${",
        "<<'' $((",
        "cat <<'' \\",
        "EOF-c2>&1!cd>>{}xargs$(<< ||||-exec>>||~-c-c{}>(sh<($(",
        "<<<<<<<<''(\"\" ;)\\\n",
        "<<-$($(\"$((''|<<&${'$(&}`<<\"}&'(}<<<|)({$(\\\n",
    ] {
        let a = shell::analyze(script);
        let _ = a.is_read_only();
        let _ = a.signatures(ws, ".");
    }
}

/// The analysis's tests on generated and hostile text.
const CAPPED: [&str; 5] = [
    "policy_props::nested_shapes_never_panic_or_abort",
    "policy_props::the_shell_splitter_never_panics_on_any_text",
    "policy_props::the_shell_splitter_never_panics_on_shell_like_text",
    "policy_props::the_analyser_never_panics_on_the_corpus_mutated",
    "policy_props::scripts_that_hung_the_parser_are_decided",
];

/// No generated input panics the analysis or aborts the process (a stack
/// overflow, memory exhausted) or keeps it busy for ever: the tests in
/// [`CAPPED`] run in a child of this test binary under a 4 GiB
/// address-space limit, killed after five minutes, and must exit cleanly.
#[test]
fn the_analysis_never_panics_or_aborts_under_a_memory_cap() {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe().unwrap();
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["--ignored", "--exact", "--test-threads=2"])
        .args(CAPPED)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // SAFETY: setrlimit only, between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let cap = libc::rlimit {
                rlim_cur: 4 << 30,
                rlim_max: 4 << 30,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &cap) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn().unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let Ok(out) = rx.recv_timeout(std::time::Duration::from_secs(300)) else {
        // SAFETY: a plain kill of the child started above.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        panic!("the analysis tests ran for over five minutes: a runaway analysis");
    };
    let out = out.unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{:?}\n{text}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains(&format!("{} passed", CAPPED.len())), "{text}");
}
