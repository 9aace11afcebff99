//! Pattern parsing and matching, rule by rule.

use super::*;

#[test]
fn parse_holds_its_bounds_and_balances_parentheses() {
    let ok = |t: &str| Pattern::parse(t).is_ok();
    // Balanced parentheses inside the specifier, and not.
    assert!(ok("Edit(a(b)c)"));
    assert!(ok("Bash(echo a(b)c)"));
    assert!(!ok("Edit(a(b)"));
    assert!(!ok("Edit(a)b(c)"));
    assert!(!ok("Bash(a)b(c)"));
    // A whole rule: at most MAX_RULE_CHARS.
    let long = |n: usize| format!("Bash({})", "x".repeat(n - 6));
    assert!(ok(&long(MAX_RULE_CHARS)));
    assert!(!ok(&long(MAX_RULE_CHARS + 1)));
    // A path: at most MAX_PATH_RULE_CHARS characters and
    // MAX_PATH_SEGMENTS segments.
    let path = |n: usize| format!("Read(a/{})", "b".repeat(n - 2));
    assert!(ok(&path(MAX_PATH_RULE_CHARS)));
    assert!(!ok(&path(MAX_PATH_RULE_CHARS + 1)));
    let segments = |n: usize| format!("Read({})", vec!["d"; n].join("/"));
    assert!(ok(&segments(MAX_PATH_SEGMENTS)));
    assert!(!ok(&segments(MAX_PATH_SEGMENTS + 1)));
    assert!(Pattern::parse("Read(/etc/**)").unwrap().is_absolute_path());
    assert!(!Pattern::parse("Read(src/**)").unwrap().is_absolute_path());
}

#[test]
fn a_deny_rule_names_its_program_by_base_name_and_nothing_else() {
    let bash = |s: &str| Signature::new(Family::Bash, s);
    let curl = Pattern::parse("Bash(/usr/bin/curl:*)").unwrap();
    assert!(curl.matches(&bash("curl -s x"), true));
    let rm = Pattern::parse("Bash(rm -rf /tmp/x:*)").unwrap();
    assert!(rm.matches(&bash("rm -rf /tmp/x"), true));
    assert!(!rm.matches(&bash("rm -rf x"), true));
}

fn m(p: &str, s: &str) -> bool {
    let pat = Pattern::parse(p).unwrap();
    let sig = Signature::new(pat.family, s);
    pat.matches(&sig, false)
}

#[test]
fn bash_words() {
    assert!(m("Bash(cargo test:*)", "cargo test"));
    assert!(m("Bash(cargo test:*)", "cargo test --release"));
    assert!(!m("Bash(cargo test:*)", "cargo testx"));
    assert!(m("Bash(git diff)", "git diff"));
    assert!(!m("Bash(git diff)", "git diff --stat"));
    assert!(!m("Bash(git diff *)", "git diff-index"));
    assert!(m("Bash(npm run test-*)", "npm run test-unit"));
    assert!(!m("Bash(git)", "/usr/bin/git"));
}

#[test]
fn paths() {
    assert!(m("Edit(src/**)", "src/a/b.rs"));
    assert!(!m("Edit(src/*.rs)", "src/a/b.rs"));
    assert!(m("Read(.env)", "config/.env"));
    assert!(m("Edit(.github)", ".github/workflows/ci.yml"));
    assert!(!m("Edit(src/**)", "/abs/src/x"));
    assert!(m("Read(/tmp/**)", "/tmp/x"));
    assert!(!m("Read(/tmp/**)", "tmp/x"));
    assert!(m("Read", "/etc/passwd"));
}

fn tree(p: &str, s: &str, for_deny: bool) -> bool {
    let pat = Pattern::parse(p).unwrap();
    pat.matches(&Signature::tree(pat.family, s), for_deny)
}

#[test]
fn folders_and_what_lies_beneath() {
    // A deny rule fires when any path beneath could match.
    assert!(tree("Read(.env)", ".", true));
    assert!(tree("Read(.env)", "src", true));
    assert!(tree("Read(secrets/**)", ".", true));
    assert!(tree("Read(secrets/*.key)", "secrets", true));
    assert!(tree("Edit(.github/**)", ".", true));
    assert!(tree("Edit(.github)", "./", true));
    assert!(!tree("Read(secrets/**)", "src", true));
    assert!(!tree("Edit(.github/**)", "src/a", true));
    assert!(tree("Edit(src/**)", "src/a", true));
    // An allow rule must cover the whole folder.
    assert!(tree("Edit(src/**)", "src", false));
    assert!(tree("Edit(src/**)", "src/a", false));
    assert!(tree("Edit(src)", "src/a", false));
    assert!(tree("Edit(src/*)", "src", false));
    assert!(!tree("Edit(src/*.rs)", "src", false));
    assert!(!tree("Edit(src/**)", ".", false));
    assert!(tree("Edit", ".", false));
    assert!(!tree("Edit(**/*.py)", "src", false));
}

#[test]
fn errors() {
    assert!(matches!(
        Pattern::parse("Frob(x)"),
        Err(PatternError::UnknownFamily(_))
    ));
    assert!(matches!(
        Pattern::parse("Read(x"),
        Err(PatternError::Unbalanced(_))
    ));
    assert!(matches!(
        Pattern::parse("Read(a[)"),
        Err(PatternError::Glob { .. })
    ));
    let deep = format!("Read({})", ["a"; 5_000].join("/"));
    assert!(matches!(
        Pattern::parse(&deep),
        Err(PatternError::TooLarge(_))
    ));
    assert!(matches!(
        Pattern::parse(&format!("Bash({})", "x ".repeat(7_000))),
        Err(PatternError::TooLarge(_))
    ));
}

#[test]
fn the_test_builtin_and_stars() {
    assert!(m("Bash([:*)", "[ -z x ]"));
    assert!(m("Bash([[:*)", "[[ -z x ]]"));
    assert!(m("Bash(* x * y *)", "a x b c y"));
    assert!(!m("Bash(* x * y)", "a x b c y z"));
    assert!(m("Bash(git * --force)", "git push origin --force"));
    assert!(m("Bash(ls [ab])", "ls a"));
    // Many `*` against a long command: decided at once, not 2^n.
    let many = format!("Bash({}z)", "* a ".repeat(20));
    let words = vec!["a"; 3_000].join(" ");
    assert!(!m(&many, &words));
}

#[test]
fn long_paths_match_their_folders() {
    let long = ["d"; 4_000].join("/");
    assert!(m("Read(d/d)", &long));
    assert!(!m("Read(x/**)", &long));
    assert!(m("Read(/tmp)", "/tmp/a/b"));
    assert!(!m("Read(/tmp)", "/tmpx"));
}

#[test]
fn what_a_pattern_names_for_a_sandbox() {
    let p = |t: &str| Pattern::parse(t).unwrap();
    assert_eq!(p("Edit(.github/**)").fixed_path(), Some((".github", true)));
    assert_eq!(
        p("Edit(./Cargo.lock)").fixed_path(),
        Some(("Cargo.lock", false))
    );
    assert_eq!(p("Read(./.env)").fixed_path(), Some((".env", false)));
    // At any depth, a glob, absolute, another family: no one path.
    for t in [
        "Edit(Cargo.lock)",
        "Read(**/.env)",
        "Edit(src/*.rs)",
        "Edit(/etc/**)",
        "Bash(ls)",
    ] {
        assert_eq!(p(t).fixed_path(), None, "{t}");
    }
    assert_eq!(p("Bash(git push:*)").program(), Some("git"));
    assert_eq!(p("Bash(/usr/bin/curl:*)").program(), Some("curl"));
    assert_eq!(p("Bash(git*:*)").program(), None);
    assert_eq!(p("Bash(*)").program(), None);
    assert_eq!(p("Read(x)").program(), None);
    assert!(p("Bash(curl:*)").names_program_whole());
    assert!(p("Bash(/usr/bin/curl *)").names_program_whole());
    assert!(!p("Bash(curl)").names_program_whole());
    assert!(!p("Bash(git push:*)").names_program_whole());
    assert!(!p("Bash(py*:*)").names_program_whole());
}
