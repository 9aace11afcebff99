//! Backstops relax only what the analysis cannot see into (issue 73, item
//! 6): a program a command's words show being started (`rg --pre X`, `rg
//! -z`'s decompressors, `sed s///e`, `awk 'system(...)'`, `git -c
//! core.pager=X`) is not the allowed program's own code, so under an allow
//! list it is refused with or without backstops; under `default: allow` the
//! default decides, as for any call.

mod support;

use runner_policy::{Backstops, Verdict};
use support::decide_bash as decide;

fn all() -> Backstops {
    Backstops::all()
}

const READONLY: &str = "default: deny\nrules:\n  - allow: [\"Bash(rg:*)\", \"Bash(sed:*)\", \"Bash(awk:*)\", \"Bash(git:*)\", \"Bash(tar:*)\", \"Bash(python3:*)\"]\n";

const STARTS: &[&str] = &[
    "rg --pre pwned foo .",
    "rg --hostname-bin whoami foo",
    "rg -z foo .",
    "sed 's/y/echo hi/e' f.txt",
    "sed -n '1e id' f.txt",
    "awk 'BEGIN { system(\"id\") }'",
    "awk '{ print | \"sh\" }' f.txt",
    "git -c core.pager=pwned log",
    "git diff --ext-diff",
    "tar -xf a.tar --to-command=pwned",
];

#[test]
fn a_program_the_words_start_needs_more_than_its_starters_rule() {
    for backstops in [Backstops::default(), all()] {
        for cmd in STARTS {
            let (v, why) = decide(READONLY, backstops, cmd);
            assert_eq!(v, Verdict::Deny, "{cmd} under {backstops:?}: {why}");
        }
    }
    // Under the backstops the reason says what was seen.
    let (_, why) = decide(READONLY, all(), "rg --pre pwned foo .");
    assert!(why.contains("it starts a program its words show"), "{why}");
    // What the analysis cannot see into still runs under the walls, and
    // the allowed programs' plain uses stay allowed.
    for cmd in [
        "python3 -c 'print(1)'",
        "rg -n foo src",
        "sed -n 1p f.txt",
        "awk '{print $1}' f.txt",
    ] {
        let (v, why) = decide(READONLY, all(), cmd);
        assert_eq!(v, Verdict::Allow, "{cmd}: {why}");
    }
}

#[test]
fn under_default_allow_the_default_decides_with_the_walls() {
    let team = "default: allow\nrules:\n  - deny: [\"Bash(git push:*)\"]\n";
    for cmd in STARTS {
        let (v, why) = decide(team, all(), cmd);
        assert_eq!(v, Verdict::Allow, "{cmd}: {why}");
    }
}
