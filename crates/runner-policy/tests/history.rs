//! Reads of git's history (issue 72): allowed where the copy's git view
//! holds nothing the policy denies reading (the history backstop), decided
//! strictly, as reads of everything they may reach, where it does not.

mod support;

use runner_policy::{Backstops, Verdict};

/// Policy YAML and the backstops a run holds, as a set to decide with.
struct Set(&'static str, Backstops);

fn policy(yaml: &'static str, backstops: Backstops) -> Set {
    Set(yaml, backstops)
}

fn verdict(set: &Set, cmd: &str) -> (Verdict, String) {
    support::decide_bash(set.0, set.1, cmd)
}

const READERS: &[&str] = &[
    "git log -p --all",
    "git log -p | grep -i password",
    "git log -S hunter2 --all",
    "git show HEAD~1",
    "git diff HEAD~2 HEAD",
    "git format-patch --stdout HEAD~3",
    "git archive HEAD~1 | tar -xO .env",
    "git grep password HEAD~1",
    "git cat-file -p 0123abcd",
    "git cat-file --batch-all-objects --batch",
    "git bundle create /tmp/b --all",
];

/// Backstops of a confined run whose view holds history safely, or not.
fn confined(history: bool) -> Backstops {
    Backstops {
        reads: history,
        history,
        ..Backstops::all()
    }
}

#[test]
fn history_readers_are_allowed_where_the_view_keeps_history_safe() {
    let set = policy(
        "default: allow\nrules:\n  - deny: [\"Read(./.env)\"]\n",
        confined(true),
    );
    for cmd in READERS {
        assert_eq!(verdict(&set, cmd).0, Verdict::Allow, "{cmd}");
    }
    // A revision's denied file by name is a read of it, held or not.
    let (v, why) = verdict(&set, "git show HEAD~1:.env");
    assert_eq!(v, Verdict::Deny, "{why}");
}

#[test]
fn history_readers_are_decided_strictly_without_the_backstop() {
    let set = policy(
        "default: allow\nrules:\n  - deny: [\"Read(./.env)\"]\n",
        confined(false),
    );
    for cmd in READERS {
        let (v, why) = verdict(&set, cmd);
        assert_eq!(v, Verdict::Deny, "{cmd}: {why}");
        assert!(why.contains("Read(**)"), "{cmd}: {why}");
    }
    // Narrowed to a pathspec beneath which no rule denies, it reads
    // safely; the whole tree does not, whatever spells it.
    for cmd in ["git log -p -- src", "git diff HEAD~50 tests/a.py"] {
        let (v, why) = verdict(&set, cmd);
        assert_eq!(v, Verdict::Allow, "{cmd}: {why}");
    }
    let (v, why) = verdict(&set, "git log -p -- .");
    assert_eq!(v, Verdict::Deny, "{why}");
    // What lists commits or names reads no content.
    for cmd in ["git log --oneline", "git log --stat", "git show -s HEAD"] {
        let (v, why) = verdict(&set, cmd);
        assert_eq!(v, Verdict::Allow, "{cmd}: {why}");
    }
    // The policy's own rule decides where the built-in layer is given back.
    let waived = policy(
        "default: allow\nrules:\n  - allow: [\"Read(**)\"]\n    reason: the test gives credentials back\n  - deny: [\"Read(./.env)\"]\n",
        confined(false),
    );
    let (v, why) = verdict(&waived, "git log -p");
    assert_eq!(v, Verdict::Deny, "{why}");
}
