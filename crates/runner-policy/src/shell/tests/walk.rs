//! Nesting, arithmetic read both ways, assignments, process
//! substitutions, wrappers and env.

use super::super::{analyze, state};
use super::{cmds, files};

/// Scripts nested in scripts, up to a depth; siblings do not add up.
#[test]
fn nesting_depth_of_scripts() {
    let deep = |n: usize| format!("{}true", "eval ".repeat(n));
    let too_deep = Some("commands nested too deeply to check");
    let boundary = (1..40)
        .find(|&n| analyze(&deep(n)).opaque.as_deref() == too_deep)
        .expect("some depth is too deep");
    assert_eq!(boundary, state::MAX_DEPTH + 1);
    // Siblings each go one level down and come back.
    let siblings = vec!["eval true"; state::MAX_DEPTH + 2].join("; ");
    assert_eq!(analyze(&siblings).opaque, None);
    // A compound command's block ends too: `set -e` after it is at
    // the top.
    assert_eq!(
        files("if true; then :; fi; set -e; cd a; rm x").1,
        ["Edit(a/x)"]
    );
}

/// `((...))` read both as arithmetic and as a subshell where the two
/// readings differ; `$((...))` likewise.
#[test]
fn arithmetic_read_both_ways() {
    let a = analyze("(( x == \")\" ))");
    assert!(
        a.commands.iter().any(|c| c.words.join(" ") == "x == )"),
        "{a:?}"
    );
    assert_eq!(
        analyze("(( $(id) == ')' ))").opaque.as_deref(),
        Some("a command substitution inside an arithmetic expression")
    );
    let a = analyze("echo $(( x == ')' ))");
    assert_eq!(a.opaque, None);
    assert!(
        a.commands.iter().any(|c| c.words.join(" ") == "x == )"),
        "{a:?}"
    );
    assert_eq!(
        analyze("echo $(( $(id) == ')' ))").opaque.as_deref(),
        Some("a command substitution inside an arithmetic expression")
    );
    // `((a; ls))`: brush-parser reads a subshell in a subshell, bash may
    // read arithmetic (its `a` evaluated), so both readings are walked.
    let evaluated = |s: &str| {
        analyze(s)
            .opaque
            .is_some_and(|w| w.starts_with("bash evaluates the value of `a`"))
    };
    assert!(evaluated("read a; ((a; ls))"));
    assert!(evaluated("read a; ((ls; ls; a))"));
    assert!(evaluated("read a; ((a; echo ')'))"));
    assert!(cmds("((a; ls))").contains(&"ls".to_string()));
    assert_eq!(
        analyze("echo $[1+2]").opaque.as_deref(),
        Some("`$[1+2]` could not be read as bash reads it")
    );
}

/// Assignments: a program-naming variable is its command; a risky one
/// with a value only known at run time is opaque; an array's values
/// carry their origins.
#[test]
fn assignments_and_their_values() {
    assert!(cmds("CC=clang make").contains(&"clang".to_string()));
    let sets_cc = Some("it sets CC, which changes what commands run");
    assert_eq!(analyze("CC=$X make").opaque.as_deref(), sets_cc);
    assert_eq!(analyze("CC=*.sh make").opaque.as_deref(), sets_cc);
    assert!(analyze("a=($(cat f)); (( a ))").opaque.is_some());
    assert!(analyze("a=(*); (( a ))").opaque.is_some());
    assert_eq!(analyze("a=(1 2); (( a ))").opaque, None);
}

/// Process substitutions: walked, standing for a file name; glued to a
/// word, bash makes one word of them, named at run time.
#[test]
fn process_substitutions() {
    assert_eq!(cmds("cat <(ls)"), ["ls", "cat <(...)"]);
    // A file operand named at run time: no path the rules can see.
    let rm = analyze("rm <(ls)");
    assert!(rm.writes.is_empty(), "{rm:?}");
    assert_eq!(files("cat <(ls)").0, Vec::<String>::new());
    let glued =
        Some("a process substitution glued to a word makes one word bash names at run time");
    assert_eq!(analyze("cat a<(ls)").opaque.as_deref(), glued);
    assert_eq!(analyze("cat <(ls)b").opaque.as_deref(), glued);
    assert_eq!(analyze("cat >(ls)b").opaque.as_deref(), glued);
    assert_eq!(analyze("cat <(ls) b").opaque, None);
    assert_eq!(analyze("A=1 cat <(ls) b").opaque, None);
    // Backquotes: the script inside, its escapes removed.
    assert!(cmds("echo `rm x`").contains(&"rm x".to_string()));
    assert!(cmds("echo `echo \\`rm y\\``").contains(&"rm y".to_string()));
}

/// Every wrapper's command is looked into, past the wrapper's options.
#[test]
fn each_wrapper_runs_its_command() {
    for s in [
        "sudo -u root rm x",
        "doas rm x",
        "timeout -s KILL 5 rm x",
        "nice -n 5 rm x",
        "ionice -c 3 rm x",
        "stdbuf -o L rm x",
        "nohup rm x",
        "setsid -f rm x",
        "builtin rm x",
        "exec -a name rm x",
        "time -p rm x",
        "command rm x",
        "unbuffer rm x",
        "/usr/bin/time -f %e -a -o log rm x",
        "/usr/bin/time --append --output=log rm x",
        "watch -n 1 rm x",
        "eval rm x",
        "eval 'rm x'",
        "trap 'rm x' EXIT",
        "trap -- 'rm x' EXIT",
    ] {
        assert!(cmds(s).contains(&"rm x".to_string()), "{s}: {:?}", cmds(s));
    }
    assert_eq!(cmds("trap -p"), ["trap -p"]);
    // `command -v/-V NAME` prints; `command -p` runs NAME.
    assert_eq!(cmds("command -v git; command -V git"), Vec::<String>::new());
    assert!(cmds("command -p rm x").contains(&"rm x".to_string()));
    assert!(cmds("sudo -- rm x").contains(&"rm x".to_string()));
    assert_eq!(cmds("sudo -n"), ["sudo -n"]);
    // `hash` without `-p` only remembers paths: part of the script.
    assert_eq!(cmds("hash git; hash -r; git status"), ["git status"]);
    assert!(cmds("xargs -0 echo hi").contains(&"echo hi".to_string()));
    assert_eq!(
        analyze("xargs -I{} echo {}").opaque.as_deref(),
        Some(
            "`xargs` gives `echo` words read when the script runs; which files they name cannot be checked"
        )
    );
    // `find -exec` without its `;` runs what follows to the end.
    assert!(
        analyze("find . -exec rm {}")
            .commands
            .iter()
            .any(|c| c.words == ["rm", "{}"])
    );
    // GNU time writes its `-o` file in every spelling.
    for s in [
        "/usr/bin/time -o log rm x",
        "/usr/bin/time -olog rm x",
        "/usr/bin/time --output log rm x",
        "/usr/bin/time --output=log -a rm x",
    ] {
        assert_eq!(files(s).1, ["Edit(log)", "Edit(x)"], "{s}");
    }
    assert_eq!(files("exec -a -ofile rm x").1, ["Edit(x)"]);
    for (s, why) in [
        ("sudo -s", "`sudo -s/-i` starts a shell"),
        ("sudo -i", "`sudo -s/-i` starts a shell"),
        ("doas --shell", "`doas -s/-i` starts a shell"),
        ("sudo --login", "`sudo -s/-i` starts a shell"),
        ("alias ls=rm", "`alias` changes what command names mean"),
        ("enable -n echo", "`enable` changes what command names mean"),
        (
            "hash -p /usr/bin/curl git; git x",
            "`hash -p` changes what command names mean",
        ),
        (
            "hash -rp /usr/bin/curl git",
            "`hash -p` changes what command names mean",
        ),
        ("python3 -u", "`python3` reads its program from stdin"),
        (
            "python3 <<EOF\nprint(1)\nEOF",
            "`python3` is fed its program through a heredoc",
        ),
    ] {
        assert_eq!(analyze(s).opaque.as_deref(), Some(why), "{s}");
    }
    assert_eq!(analyze("python3 -u x.py").opaque, None);
    // An exported program-naming variable is its command.
    assert!(cmds("export CC=clang; make").contains(&"clang".to_string()));
    assert!(cmds("env CC=clang make").contains(&"clang".to_string()));
    assert!(analyze("export CC=$X").opaque.is_some());
    // An option only known at run time matters only to a program that
    // takes files.
    assert_eq!(analyze("echo -n$X").opaque, None);
}

/// env's options as getopt reads them: the command after them, and the
/// folder `-C` moves it to, in every spelling.
#[test]
fn env_options_in_every_spelling() {
    for s in [
        "env -u HOME rm x",
        "env -uHOME rm x",
        "env --unset HOME rm x",
        "env --unset=HOME rm x",
        "env --u HOME rm x",
        "env -i A=1 rm x",
        "env -iu HOME rm x",
        "env - rm x",
        "env -- rm x",
        "env -a name rm x",
        "env --argv0=name rm x",
        "env -0v rm x",
    ] {
        assert_eq!(files(s).1, ["Edit(x)"], "{s}");
    }
    let moved = Some("it writes `x` after a `cd` to a folder not known before running");
    for s in [
        "env -C .github rm x",
        "env -C.github rm x",
        "env -iC.github rm x",
        "env -iC .github rm x",
        "env --chdir=.github rm x",
        "env --chdir .github rm x",
        "env --ch .github rm x",
    ] {
        assert_eq!(analyze(s).opaque.as_deref(), moved, "{s}");
    }
    let split = Some("`env -S` splits a string into a command");
    for s in [
        "env -S 'rm x'",
        "env -vS'rm x'",
        "env --split-string='rm x'",
        "env --sp 'rm x'",
    ] {
        assert_eq!(analyze(s).opaque.as_deref(), split, "{s}");
    }
    assert_eq!(
        analyze("env -P /tmp rm x").opaque.as_deref(),
        Some("`env -P` names the folders programs are found in")
    );
}

/// Wrappers around wrappers, up to a depth; a wrapped program named
/// only at run time.
#[test]
fn wrappers_nested_and_named_at_run_time() {
    let wrapped = |n: usize| format!("{}true", "env ".repeat(n));
    let too_deep = Some("wrappers nested too deeply to check");
    let first = (1..40)
        .find(|&n| analyze(&wrapped(n)).opaque.as_deref() == too_deep)
        .expect("some depth is too deep");
    assert_eq!(first, state::MAX_DEPTH + 1);
    // Each wrapper counts.
    for w in [
        "sudo ",
        "timeout 1 ",
        "nice ",
        "stdbuf -o L ",
        "nohup ",
        "xargs ",
        "find . -exec ",
    ] {
        let n = state::MAX_DEPTH + 1;
        assert_eq!(
            analyze(&format!("{}true", w.repeat(n))).opaque.as_deref(),
            too_deep,
            "{w}"
        );
        assert_eq!(
            analyze(&format!("{}true", w.repeat(n - 1))).opaque,
            None,
            "{w}"
        );
    }
    assert_eq!(
        analyze("env $CMD").opaque.as_deref(),
        Some("the command word `$CMD` is only known when the script runs")
    );
    // A program whose name is the text `$x` (quoted) is that name.
    assert_eq!(analyze("'$x' a").opaque, None);
}

/// Text the word parser left alone: an expansion it could not read
/// is still one to bash; a `$` at a word's end is a `$`.
#[test]
fn expansions_left_as_text() {
    let why = analyze("echo ${a[($x]}").opaque.unwrap_or_default();
    assert!(
        why.contains("holds an expansion the parser read as text"),
        "{why}"
    );
    assert_eq!(analyze("echo a$").opaque, None);
    assert_eq!(analyze("echo a$ b").opaque, None);
    // A name in literal text is a copy (`_` too), for arithmetic.
    assert!(analyze("read x; y=x; (( y ))").opaque.is_some());
    assert!(analyze("read _; y=_; (( y ))").opaque.is_some());
    assert_eq!(analyze("read x; y=1; (( y ))").opaque, None);
}
