//! Inline code of every interpreter is decided alike (issue 73, item 2):
//! under `default: allow` with a program deny rule, the exec wall backs
//! that rule whatever code starts the program, so inline code runs; without
//! the wall it is refused, and the reason says why.

mod support;

use runner_policy::{Backstops, Verdict};

const INLINE: &[&str] = &[
    "python3 -c 'print(1)'",
    "perl -pi -e 's/a/b/' f.txt",
    "perl -E 'say 1'",
    "perl -ne 'print if /x/' f.txt",
    "ruby -e 'puts 1'",
    "node -e 'console.log(1)'",
    "node --eval 'console.log(1)'",
    "node -p '1+1'",
    "php -r 'echo 1;'",
    "lua -e 'print(1)'",
    "Rscript -e '1'",
    "deno eval '1'",
    "bun -e '1'",
    "cat <<'EOF' | perl\nprint 1\nEOF",
];

fn decide(exec: bool, cmd: &str) -> (Verdict, String) {
    let yaml = "default: allow\nrules:\n  - deny: [\"Bash(rm:*)\"]\n";
    support::decide_bash(
        yaml,
        Backstops {
            exec,
            ..Backstops::all()
        },
        cmd,
    )
}

#[test]
fn every_interpreters_inline_code_runs_under_the_exec_wall_and_not_without() {
    for cmd in INLINE {
        let (v, why) = decide(true, cmd);
        assert_eq!(v, Verdict::Allow, "{cmd}: {why}");
        assert!(
            why.contains("every deny rule has a backstop"),
            "{cmd}: {why}"
        );
        let (v, why) = decide(false, cmd);
        assert_eq!(v, Verdict::Deny, "{cmd}: {why}");
        assert!(
            why.contains("cannot be checked safely") && why.contains("Bash(rm:*)"),
            "{cmd}: {why}"
        );
    }
}
