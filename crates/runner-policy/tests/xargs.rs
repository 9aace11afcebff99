//! Run-time words to allowed programs (issue 73, item 1): `xargs PROG`
//! reading what a known producer prints is decided as PROG reading beneath
//! where those paths lie, so an allow list that allows PROG allows it where
//! the read backstop holds, and a read deny beneath refuses it where not.

mod support;

use runner_policy::{Backstops, Verdict};

const LIST: &str = "default: deny\nrules:\n  - allow: [\"Bash(grep:*)\", \"Bash(find:*)\", \"Bash(xargs:*)\", \"Bash(head:*)\", \"Bash(git:*)\", \"Bash(rg:*)\", \"Bash(sed:*)\", \"Bash(wc:*)\"]\n  - deny: [\"Read(./.env)\", \"Bash(rm:*)\"]\n";

fn decide(backstops: Backstops, cmd: &str) -> (Verdict, String) {
    support::decide_bash(LIST, backstops, cmd)
}

fn every() -> Backstops {
    Backstops::all()
}

#[test]
fn readers_of_a_known_producers_paths_are_decided_as_readers() {
    for cmd in [
        "find . -name '*.py' | xargs grep -l X",
        "find . -name '*.py' -print0 | xargs -0 grep -l X | head -10",
        "find . -name '*.py' -exec grep -l X {} +",
        "git ls-files | xargs grep -n TODO",
        "git diff --name-only | xargs grep -c x",
        "rg -l TODO | xargs grep -n FIXME",
    ] {
        let (v, why) = decide(every(), cmd);
        assert_eq!(v, Verdict::Allow, "{cmd}: {why}");
        // Without the read backstop, a read deny beneath refuses it.
        let (v, why) = decide(Backstops::default(), cmd);
        assert_eq!(v, Verdict::Deny, "{cmd}: {why}");
    }
    // Beneath a folder no rule denies, it reads safely without backstops
    // when each word is a whole path (NUL-separated, as printed).
    for cmd in [
        "find src -type f -print0 | xargs -0 wc -l",
        "find src -name '*.rs' -print0 | xargs -0r sed -n 1p",
    ] {
        for b in [Backstops::default(), every()] {
            let (v, why) = decide(b, cmd);
            assert_eq!(v, Verdict::Allow, "{cmd}: {why}");
        }
    }
    // Split at blanks, a name like `src/x .env` gives `cat` the word
    // `.env` (or `/etc/shadow`): without the walls, refused.
    for cmd in [
        "find src -type f | xargs wc -l",
        "find src -type f -print0 | xargs wc -l",
        "find src -type f | xargs -0 wc -l",
    ] {
        let (v, why) = decide(Backstops::default(), cmd);
        assert_eq!(v, Verdict::Deny, "{cmd}: {why}");
        let (v, why) = decide(every(), cmd);
        assert_eq!(v, Verdict::Allow, "{cmd}: {why}");
    }
}

#[test]
fn writers_unknown_producers_and_option_shaped_names_stay_strict() {
    for cmd in [
        // Denied by its program's own rule.
        "find . | xargs rm",
        // A shell given words at run time.
        "find . -name x | xargs sh -c 'echo'",
        // A writer given the paths.
        "find src -name '*.rs' | xargs sed -i s/a/b/",
        // find printing something else than paths.
        "find . -printf '%p' | xargs grep X",
        // Names a list could spell as options, to a program with options
        // that run things (`rg --pre`).
        "git ls-files | xargs rg TODO",
        // A producer whose output is unknown.
        "cat list | xargs grep X",
        // Words put in place of a string inside a word of their own.
        "find . -name x | xargs -I{} grep X {}.bak",
    ] {
        let (v, why) = decide(every(), cmd);
        assert_eq!(v, Verdict::Deny, "{cmd}: {why}");
    }
}

/// GNU `parallel` is looked into as `xargs` is: its command is a shell
/// script run once per value, and a program it starts needs its own rule.
#[test]
fn parallel_runs_its_command_for_each_value_and_is_decided_so() {
    let list = "default: deny\nrules:\n  - allow: [\"Bash(grep:*)\", \"Bash(find:*)\", \"Bash(parallel:*)\", \"Bash(echo:*)\"]\n  - deny: [\"Read(./.env)\", \"Bash(rm:*)\"]\n";
    let d = |b: Backstops, cmd: &str| support::decide_bash(list, b, cmd);
    for b in [Backstops::default(), every()] {
        for cmd in [
            // A program the rules deny, with values or with words read
            // when the script runs.
            "parallel rm ::: a b",
            "find . | parallel rm",
            "parallel 'rm {}' ::: a",
            "parallel -j4 -k rm -- ::: x",
            // A value that names a denied file.
            "parallel grep x ::: .env",
            // The lines read are the commands; elsewhere; unmodelled.
            "parallel ::: 'rm -rf /'",
            "cat cmds | parallel",
            "parallel -S host grep x ::: a",
            "parallel --frobnicate grep x ::: a",
            // A program no rule allows.
            "parallel sed -i s/a/b/ ::: f",
        ] {
            let (v, why) = d(b, cmd);
            assert_eq!(v, Verdict::Deny, "{cmd} under {b:?}: {why}");
        }
        for cmd in [
            "parallel grep -l X ::: a.py b.py",
            "parallel -j4 'grep -l X {}' ::: src/a.py",
            "parallel echo ::: a b c",
        ] {
            let (v, why) = d(b, cmd);
            assert_eq!(v, Verdict::Allow, "{cmd} under {b:?}: {why}");
        }
    }
    // A reader of a known producer's paths: as with xargs, allowed where
    // the read backstop holds.
    let cmd = "find . -name '*.py' | parallel grep -l X";
    assert_eq!(d(every(), cmd).0, Verdict::Allow);
    assert_eq!(d(Backstops::default(), cmd).0, Verdict::Deny);
}

/// Loops over a known producer's paths (`for f in $(find ...)`, `find ...
/// | while read f`) read as `xargs` reads them; a reassigned variable, a
/// function that could reassign it, or a writer stays strict.
#[test]
fn loops_over_a_producers_paths_are_decided_as_readers() {
    for cmd in [
        "for f in $(find . -name '*.py'); do grep -l X $f; done",
        "find . -name '*.py' | while read f; do wc -l \"$f\"; done",
        "find . -name '*.py' | while read -r f; do grep -c x \"$f\"; done",
    ] {
        assert_eq!(decide(every(), cmd).0, Verdict::Allow, "{cmd}");
        // Beneath `.`, where `.env` lies: refused without the backstop.
        assert_eq!(decide(Backstops::default(), cmd).0, Verdict::Deny, "{cmd}");
    }
    // Split by the shell or read by lines, never whole paths: beneath a
    // folder no rule denies too, refused without the walls.
    let cmd = "for f in $(find src -name '*.py'); do grep -l X $f; done";
    assert_eq!(decide(every(), cmd).0, Verdict::Allow, "{cmd}");
    assert_eq!(decide(Backstops::default(), cmd).0, Verdict::Deny, "{cmd}");
    for b in [Backstops::default(), every()] {
        for cmd in [
            "for f in $(find src -name '*.py'); do rm $f; done",
            "for f in $(find src -name '*.py'); do sed -i s/a/b/ $f; done",
            "find src | while read f; do f=.env; cat $f; done",
            "find src | while read f; do cat $f; f=.env; cat $f; done",
            "find src | while read f; do read f < x; cat $f; done",
            "for f in $(find src); do export f=.env; cat $f; done",
            "g() { f=.env; }; for f in $(find src); do g; cat $f; done",
            "g() { f=.env; }; for f in src/a; do g; cat $f; done",
            "function g { f=.env; }; find src | while read f; do g; cat $f; done",
            "cat list | while read f; do cat $f; done",
            "for f in $(cat list); do cat $f; done",
        ] {
            let (v, why) = decide(b, cmd);
            assert_eq!(v, Verdict::Deny, "{cmd} under {b:?}: {why}");
        }
    }
}

/// A writer given `find`'s whole paths (NUL-separated) writes beneath its
/// roots, decided by the `Edit` rules; split at blanks, a writer that
/// starts a program, or a producer whose names could be options, strict.
#[test]
fn writers_of_finds_whole_paths_are_decided_by_the_edit_rules() {
    let list = "default: deny\nrules:\n  - allow: [\"Bash(find:*)\", \"Bash(xargs:*)\", \"Bash(sed:*)\", \"Bash(touch:*)\", \"Bash(git:*)\", \"Edit(src/**)\"]\n  - deny: [\"Read(./.env)\", \"Edit(.github/**)\"]\n";
    let d = |b: Backstops, cmd: &str| support::decide_bash(list, b, cmd);
    for b in [Backstops::default(), every()] {
        for cmd in [
            "find src -name '*.py' -print0 | xargs -0 sed -i 's/a/b/'",
            "find src -type f -print0 | xargs -0 touch",
        ] {
            let (v, why) = d(b, cmd);
            assert_eq!(v, Verdict::Allow, "{cmd} under {b:?}: {why}");
        }
        for cmd in [
            // Split at blanks: which files, unknown.
            "find src -name '*.py' | xargs sed -i 's/a/b/'",
            // Beneath a folder an Edit deny covers.
            "find . -name '*.yml' -print0 | xargs -0 sed -i 's/a/b/'",
            // A sed script that runs a command.
            "find src -print0 | xargs -0 sed 's/x/y/e'",
            // A list whose names could be options.
            "git ls-files -z src | xargs -0 sed -i s/a/b/",
        ] {
            let (v, why) = d(b, cmd);
            assert_eq!(v, Verdict::Deny, "{cmd} under {b:?}: {why}");
        }
    }
}

/// `xargs -I {}`: a reader given one line in place of each whole `{}`
/// word reads as one given split words (the whole workspace, outside only
/// under confinement); a `{}` inside a word, a writer, or a shell given
/// it stays strict.
#[test]
fn replace_strings_give_a_reader_lines() {
    for cmd in [
        "find . -name '*.py' | xargs -I {} grep -l X {}",
        "find src -name '*.py' | xargs -I{} grep -l X {}",
        "find . | xargs -I@ wc -l @",
        "find . | xargs -i wc -l {}",
    ] {
        assert_eq!(decide(every(), cmd).0, Verdict::Allow, "{cmd}");
        assert_eq!(decide(Backstops::default(), cmd).0, Verdict::Deny, "{cmd}");
    }
    for b in [Backstops::default(), every()] {
        for cmd in [
            "find . | xargs -I {} rm {}",
            "find . | xargs -I {} sh -c 'cat {}'",
            "find . -name '*.py' | xargs -I {} grep -l X {}.bak",
            "find src | xargs -I {} sed -i s/a/b/ {}",
        ] {
            let (v, why) = decide(b, cmd);
            assert_eq!(v, Verdict::Deny, "{cmd} under {b:?}: {why}");
        }
    }
}
