//! The gate bench's shapes: each a command (or a policy) built to find the
//! gate's worst case, by name, with what it is.

/// One worst case: what it builds, and how to decide it.
pub struct Shape {
    pub name: &'static str,
    pub what: &'static str,
}

pub const SHAPES: &[Shape] = &[
    Shape {
        name: "scripts-by-path",
        what: "10,000 characters of `./sN.sh;`, each a workspace script whose `#!` line is read (issue 71)",
    },
    Shape {
        name: "loader-nested",
        what: "the dynamic loader given the loader, 10,000 characters deep, then `/bin/true` (issue 71)",
    },
    Shape {
        name: "find-xargs-grep",
        what: "`find . -name '*.py' | xargs grep -l X | head -10`, a reader of find's paths (issue 73)",
    },
    Shape {
        name: "perl-pe",
        what: "`perl -pi -e 's/a/b/' f.txt`, inline code of another interpreter (issue 73)",
    },
    Shape {
        name: "parallel-values",
        what: "`parallel` with a 9,000-character command (`wc -l a;` ...) run for 64 `:::` values, each analysed (issue 73's worst case)",
    },
    Shape {
        name: "everyday",
        what: "`cargo test --workspace 2>&1 | tail -n 50` (the common case)",
    },
    Shape {
        name: "parens-69",
        what: "69 bytes of unclosed `( (( ((`",
    },
    Shape {
        name: "parens-10k",
        what: "10,000 bytes of `( (( ((` groups",
    },
    Shape {
        name: "braces-1500",
        what: "`{ ` nested 1,500 deep",
    },
    Shape {
        name: "cds-operands",
        what: "40 `cd dN || true`, then `cat` with 10,000 characters of operands",
    },
    Shape {
        name: "cds-away",
        what: "`cd /dN || true;` to 10,000 characters (each folder away read where the script may be in it), then `ls`",
    },
    Shape {
        name: "find-roots-braces",
        what: "`find` with 300 roots and `-exec cat` with 2,000 `{}`",
    },
    Shape {
        name: "star-big-folder",
        what: "`cat * * ...` (4,900 `*`) in a folder of 10,000 files",
    },
    Shape {
        name: "star-dotdot-star",
        what: "`cat */../*` operands over 1,000 folders",
    },
    Shape {
        name: "long-path",
        what: "a 10,000-character path against 1,000 path rules",
    },
    Shape {
        name: "star-words-deny",
        what: "a 10,000-character command against `deny Bash(* a * a * a * a * a * z)`",
    },
    Shape {
        name: "substitutions",
        what: "`$(` nested 12 deep, repeated to 10,000 characters",
    },
    Shape {
        name: "heredoc-cut-short",
        what: "10,000 characters of `cat <<'' a;` ending in `$(<< ($(` (a here-document with an empty tag cut short: brush-parser looped on it for ever)",
    },
    Shape {
        name: "heredoc-1mb",
        what: "`cat <<'EOF' > gen.py` with a 1 MiB body (data, not code: issue 42)",
    },
    Shape {
        name: "heredoc-1mb-open",
        what: "`python3 <<'EOF'` with a 1 MiB body never closed, under every backstop",
    },
    Shape {
        name: "heredocs-10k-lines",
        what: "10,000 lines of heredocs (`cat <<EOF > fN`, 2 lines each: over the code budget)",
    },
    Shape {
        name: "code-after-heredoc-1mb",
        what: "a small heredoc, then 1 MiB of code (`echo a b;`): refused by the quick scan before bash's tokenizer sees it (which would take ~0.45 s)",
    },
    Shape {
        name: "jobs-nested",
        what: "`make -j$(expr $(nproc) + $(nproc))` nested 12 deep, repeated to 10,000 characters",
    },
    Shape {
        name: "rules-10k-load",
        what: "loading a policy of 10,000 rules",
    },
    Shape {
        name: "rules-10k-decide",
        what: "an everyday command under 10,000 rules",
    },
    Shape {
        name: "deny-10k-one-program",
        what: "a 10,000-character `git` command under 10,000 deny rules on `git`",
    },
    Shape {
        name: "deep-path-rule",
        what: "loading a path rule of 5,000 segments",
    },
    Shape {
        name: "lint-10k",
        what: "`runner policy lint` of 10,000 rules",
    },
    Shape {
        name: "fetch-rules-20k",
        what: "a `web_fetch` of a 10,000-character URL path under 20,000 `Fetch` rules (wildcard hosts, path globs), its private address named by the last",
    },
    Shape {
        name: "fetch-glob-stars",
        what: "loading a `Fetch` rule whose path is 6,000 `*a`, and deciding a 10,000-character path against it",
    },
    Shape {
        name: "network-20k",
        what: "a connection and its address decided against `network:` lists of 20,000 entries, allowed by none",
    },
    Shape {
        name: "opaque-list-backstops",
        what: "`python3 -c x;` 64 times (the longest list decided command by command) under every backstop and 10,000 rules, the allow rule last",
    },
    Shape {
        name: "opaque-timeout-backstops",
        what: "`cd d && A=1 timeout 5 python3 -c x;` 32 times (64 commands: `timeout` and its program each decided) under every backstop and 10,000 rules, the allow rules last",
    },
    Shape {
        name: "opaque-shells-backstops",
        what: "`bash -c \"sh -c \\\"bash -c 'python3 -c x; ...'\\\"\"` (three shells deep, 64 commands) under every backstop and 10,000 rules, the allow rules last",
    },
    Shape {
        name: "curl-output-dirs",
        what: "`curl` with 10,000 characters of `--output-dir d -o f` (each output joined to each folder, up to the bound)",
    },
    Shape {
        name: "git-c-chain",
        what: "`git -C a` about 2,000 times, then `rm x` (each folder joined to the one before)",
    },
];

/// The command of an issue-71 or issue-73 shape (`scripts-by-path`,
/// `loader-nested`, `find-xargs-grep`, `perl-pe`, `parallel-values`), with the scripts it
/// runs written into `ws`.
pub fn issue_71_command(name: &str, ws: &std::path::Path) -> String {
    match name {
        "find-xargs-grep" => return "find . -name '*.py' | xargs grep -l X | head -10".into(),
        "perl-pe" => return "perl -pi -e 's/a/b/' f.txt".into(),
        "parallel-values" => {
            let body = "wc -l a; ".repeat(1_000);
            let values: Vec<String> = (0..64).map(|i| format!("v{i}")).collect();
            return format!("parallel '{body}' ::: {}", values.join(" "));
        }
        _ => {}
    }
    let mut cmd = String::new();
    if name == "loader-nested" {
        while cmd.len() < 9_960 {
            cmd.push_str("/lib64/ld-linux-x86-64.so.2 ");
        }
        return cmd + "/bin/true";
    }
    for i in 0.. {
        let run = format!("./s{i}.sh;");
        if cmd.len() + run.len() > 10_000 {
            break;
        }
        std::fs::write(ws.join(format!("s{i}.sh")), "#!/bin/sh -e\necho x\n").unwrap();
        cmd.push_str(&run);
    }
    cmd
}

/// `cd /dN || true; ` to 10,000 characters, then `ls`: each `cd` a folder
/// away, read for each folder the script may be in.
pub fn cds_away() -> String {
    let mut s = String::new();
    for i in 0.. {
        let cd = format!("cd /d{i} || true; ");
        if s.len() + cd.len() + 2 > 9_990 {
            break;
        }
        s.push_str(&cd);
    }
    s + "ls"
}
