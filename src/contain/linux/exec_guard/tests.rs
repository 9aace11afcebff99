//! The exec wall's decisions on argvs, copies, links and cargo's aliases.

use super::*;

/// Decides an exec as the supervisor does: its names found first.
fn decide(
    g: &ExecGuard,
    exe: &Path,
    argv: &[String],
    env: &[String],
    cwd: &Path,
) -> Option<ExecRefusal> {
    g.decide(
        &g.names(exe, None, argv.first().map(String::as_str)),
        argv,
        env,
        cwd,
    )
}

fn guard(yaml: &str) -> Option<ExecGuard> {
    let p = runner_policy::parse_policy_yaml(yaml, Path::new("p.yaml")).unwrap();
    ExecGuard::new(Arc::new(PolicySet::new(vec![p])), None, Default::default())
}

#[test]
fn rules_with_a_wall_already_need_no_guard() {
    let p = runner_policy::parse_policy_yaml(
        "default: allow\nrules:\n  - deny: [\"Bash(sudo:*)\", \"Bash(curl:*)\"]\n",
        Path::new("p.yaml"),
    )
    .unwrap();
    let set = Arc::new(PolicySet::new(vec![p]));
    let walls = runner_policy::Backstops {
        confined: true,
        network_off: true,
        ..Default::default()
    };
    assert!(ExecGuard::new(set.clone(), None, walls).is_none());
    // With the network on, curl needs the exec wall.
    let on = runner_policy::Backstops {
        network_off: false,
        ..walls
    };
    let guard = ExecGuard::new(set, None, on).unwrap();
    assert_eq!(guard.denied.keys().collect::<Vec<_>>(), ["curl"]);
}

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

#[test]
fn no_program_deny_rule_no_guard() {
    assert!(guard("default: allow\nrules:\n  - deny: [\"Read(.env)\"]\n").is_none());
}

#[test]
fn a_denied_program_is_refused_on_its_real_argv_through_its_model() {
    let g = guard("default: allow\nrules:\n  - deny: [\"Bash(git push:*)\"]\n").unwrap();
    let cwd = Path::new("/tmp");
    let git = Path::new("/usr/bin/git");
    for words in [
        &["git", "push", "origin", "main"][..],
        &["git", "-c", "user.name=x", "push"],
        &["/usr/bin/git", "push"],
        &["git", "-c", "core.pager=cat", "push"],
        // git's own options, whatever they set, before a push.
        &[
            "git",
            "--git-dir=.git",
            "--bare",
            "--namespace",
            "n",
            "push",
        ],
        // git's other names for a push: its `argv[0]`, and plumbing.
        &["git-push", "origin"],
        &["/usr/lib/git-core/git-push", "origin"],
        &["git", "send-pack", "../r.git", "main"],
        &["git-http-push", "https://example.com/r/", "main"],
        // Which word is the subcommand cannot be told: fails closed.
        &["git", "--super-prefix", "p/", "status"],
    ] {
        let r = decide(&g, git, &argv(words), &[], cwd);
        assert_eq!(
            r.as_ref().map(|r| r.rule.as_str()),
            Some("deny Bash(git push:*)"),
            "{words:?}"
        );
    }
    for words in [
        &["git", "status"][..],
        &["git", "log", "--", "push"],
        // An alias is run as a new git process with its words (`git
        // push`), decided then; a builtin is never an alias.
        &["git", "-c", "alias.p=push", "p"],
        &["git", "-c", "alias.status=push", "status"],
        &["git", "--git-dir=x", "-c", "core.pager=cat", "for-each-ref"],
        // git prints and ends.
        &["git", "--exec-path"],
        &["git-upload-pack", "/tmp/r.git"],
        // A word is one word, whatever it holds: read back quoted,
        // never as bash code of its own.
        &["git", "log", "--grep", "x; git push"],
        &["git", "commit", "-m", "it's $(git push) | `git push`"],
        &["git", "log", "--grep=x\ngit push"],
    ] {
        assert!(
            decide(&g, git, &argv(words), &[], cwd).is_none(),
            "{words:?}"
        );
    }
    // A refusal by the program's rule of an argv it does not match says
    // why; a match needs no reason.
    let why = |words: &[&str]| decide(&g, git, &argv(words), &[], cwd).and_then(|r| r.reason);
    assert_eq!(why(&["git", "push"]), None);
    let unknown = why(&["git", "--super-prefix", "p/", "status"]);
    assert!(
        unknown.as_deref() == Some("git's own options leave what it runs unknown"),
        "{unknown:?}"
    );
    // An empty word stays a word: `git '' push` runs no push (git
    // reads `''` as the subcommand), and `git push ''` is a push.
    assert!(decide(&g, git, &argv(&["git", "", "push"]), &[], cwd).is_none());
    assert!(decide(&g, git, &argv(&["git", "push", ""]), &[], cwd).is_some());
    // What the guard holds, shown without every executable's identity.
    assert!(format!("{g:?}").starts_with("ExecGuard { denied: {\"git\""));
    // Another program is not looked at.
    assert!(
        decide(
            &g,
            Path::new("/usr/bin/python3"),
            &argv(&["python3", "-c", "1"]),
            &[],
            cwd
        )
        .is_none()
    );
    // argv[0] names it: refused (stricter, never looser).
    assert!(decide(&g, Path::new("/tmp/x"), &argv(&["git", "push"]), &[], cwd).is_some());
}

/// cargo expands an alias in its own process: the exec of `cargo
/// ship` is decided as the `cargo publish` it runs.
/// gh expands an alias in its own process too: `gh m 1` with `m: pr
/// merge` in the configuration the exec's environment names.
#[test]
fn a_gh_alias_is_decided_as_what_it_expands_to() {
    let g = guard("default: allow\nrules:\n  - deny: [\"Bash(gh pr merge:*)\"]\n").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path();
    std::fs::create_dir_all(cwd.join("home/.config/gh")).unwrap();
    std::fs::write(
        cwd.join("home/.config/gh/config.yml"),
        "aliases:\n    m: pr merge\n    v: pr view\n",
    )
    .unwrap();
    let gh = Path::new("/usr/bin/gh");
    assert!(g.reads_environment(&g.names(gh, None, Some("gh"))));
    assert!(!g.reads_environment(&g.names(Path::new("/usr/bin/cargo"), None, Some("cargo"))));
    let home = vec![format!("HOME={}", cwd.join("home").display())];
    let rule =
        |words: &[&str], env: &[String]| decide(&g, gh, &argv(words), env, cwd).map(|r| r.rule);
    assert_eq!(
        rule(&["gh", "m", "1"], &home).as_deref(),
        Some("deny Bash(gh pr merge:*)")
    );
    assert_eq!(rule(&["gh", "v", "1"], &home), None);
    assert_eq!(rule(&["gh", "pr", "view"], &home), None);
    // The configuration is the one the exec's environment names.
    assert_eq!(rule(&["gh", "m", "1"], &[]), None);
}

#[test]
fn a_cargo_alias_is_decided_as_what_it_expands_to() {
    let g = guard("default: allow\nrules:\n  - deny: [\"Bash(cargo publish:*)\"]\n").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path();
    std::fs::create_dir(cwd.join(".cargo")).unwrap();
    let config = cwd.join(".cargo/config.toml");
    std::fs::write(
        &config,
        "[alias]\nship = \"publish --dry-run\"\nb2 = \"build\"\n",
    )
    .unwrap();
    let cargo = Path::new("/usr/local/bin/cargo");
    assert!(g.reads_environment(&g.names(cargo, None, Some("cargo"))));
    assert!(!g.reads_environment(&g.names(Path::new("/usr/bin/git"), None, Some("git"))));
    let env = argv(&["CARGO_ALIAS_XS=publish", "PATH=/bin"]);
    let rule = |words: &[&str]| decide(&g, cargo, &argv(words), &env, cwd).map(|r| r.rule);
    for words in [
        &["cargo", "ship"][..],
        &["cargo", "-q", "ship", "--allow-dirty"],
        &["cargo", "+nightly", "ship"],
        &["cargo", "xs"],
        // What cargo runs is in a configuration the model cannot read.
        &["cargo", "--config", "build.rustc-wrapper=/tmp/w", "build"],
    ] {
        assert_eq!(
            rule(words).as_deref(),
            Some("deny Bash(cargo publish:*)"),
            "{words:?}"
        );
    }
    for words in [
        &["cargo", "build"][..],
        &["cargo", "b2"],
        // Not the subcommand's place.
        &["cargo", "test", "ship"],
        &["cargo", "run", "--", "ship"],
    ] {
        assert_eq!(rule(words), None, "{words:?}");
    }
    // An argv the program's model cannot read is refused by the rule
    // naming the program: `python3 -` takes its program from stdin.
    let py = guard("default: allow\nrules:\n  - deny: [\"Bash(python3 -c:*)\"]\n").unwrap();
    let python3 = Path::new("/usr/bin/python3");
    for (words, refused) in [(&["python3", "-"][..], true), (&["python3", "x.py"], false)] {
        let r = decide(&py, python3, &argv(words), &env, cwd);
        assert_eq!(r.is_some(), refused, "{words:?}");
        if let Some(r) = r {
            let why = r.reason.unwrap_or_default();
            assert!(why.starts_with("its arguments cannot be read: "), "{why}");
        }
    }
    // Aliases that cannot be read: cargo is refused by the rule, and the
    // record names the file.
    std::fs::write(&config, "[alias\n").unwrap();
    let r = decide(&g, cargo, &argv(&["cargo", "build"]), &env, cwd).unwrap();
    assert_eq!(r.rule, "deny Bash(cargo publish:*)");
    let why = r.reason.unwrap_or_default();
    assert!(
        why.starts_with("cargo's aliases unreadable: ") && why.contains("config.toml"),
        "{why}"
    );
    // No rule names cargo: its aliases are not read.
    let git = guard("default: allow\nrules:\n  - deny: [\"Bash(git push:*)\"]\n").unwrap();
    assert!(!git.reads_environment(&git.names(cargo, None, Some("cargo"))));
    assert!(decide(&git, cargo, &argv(&["cargo", "build"]), &env, cwd).is_none());
}

#[test]
fn a_copy_or_link_of_a_denied_program_is_that_program() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::write(bin.join("tool"), b"#!/bin/sh\necho the real tool\n").unwrap();
    let p = runner_policy::parse_policy_yaml(
        "default: allow\nrules:\n  - deny: [\"Bash(tool push:*)\"]\n",
        Path::new("p.yaml"),
    )
    .unwrap();
    let path = bin.display().to_string();
    let g = ExecGuard::new(
        Arc::new(PolicySet::new(vec![p])),
        Some(&path),
        Default::default(),
    )
    .unwrap();
    let copy = dir.path().join("renamed");
    std::fs::copy(bin.join("tool"), &copy).unwrap();
    let link = dir.path().join("linked");
    std::fs::hard_link(bin.join("tool"), &link).unwrap();
    let other = dir.path().join("other");
    std::fs::write(&other, b"#!/bin/sh\necho another tool!\n").unwrap();
    for exe in [&copy, &link] {
        let name = exe.file_name().unwrap().to_str().unwrap();
        let r = decide(&g, exe, &argv(&[name, "push"]), &[], dir.path());
        assert!(r.is_some(), "{}", exe.display());
    }
    // Same size, other content: not the program.
    assert!(decide(&g, &other, &argv(&["other", "push"]), &[], dir.path()).is_none());
}

/// What the wall cannot read it refuses and says: by the rule naming the
/// program, or (where only a rule whose program is a pattern may apply)
/// by the wall itself, each with what could not be read.
#[test]
fn an_exec_the_wall_cannot_read_is_refused_with_what_was_unread() {
    let g =
        guard("default: allow\nrules:\n  - deny: [\"Bash(git push:*)\", \"Bash(*)\"]\n").unwrap();
    let names = g.names(Path::new("/usr/bin/git"), None, Some("git"));
    let git = g.unreadable(&names, &["git".into()], "arguments");
    assert_eq!(git.rule, "deny Bash(git push:*)");
    assert_eq!(
        git.reason.as_deref(),
        Some("its arguments could not be read from the process")
    );
    let names = g.names(Path::new("/bin/true"), None, Some("true"));
    let other = g.unreadable(&names, &["true".into()], "environment");
    assert_eq!(other.rule, UNREADABLE_EXEC);
    assert_eq!(other.policy, "sandbox");
    assert_eq!(
        other.reason.as_deref(),
        Some("its environment could not be read from the process")
    );
    let whole = ExecGuard::unreadable_exec(&["/x".into()]);
    assert_eq!(whole.argv, ["/x"]);
    assert!(whole.reason.unwrap().contains("path or argv[0]"));
}
