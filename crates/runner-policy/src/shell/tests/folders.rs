//! What the walk finds of folders, redirections and loops.

use super::super::{analyze, expands_code};
use super::{cmds, files};

/// Where a script is when it writes: `set -e` and `&&` make a `cd`
/// hold; otherwise it may not have moved.
#[test]
fn the_folders_a_script_may_be_in() {
    let edits = |s: &str| files(s).1;
    let e = |v: &[&str]| v.iter().map(|s| format!("Edit({s})")).collect::<Vec<_>>();
    assert_eq!(edits("set -e; cd a; rm x"), e(&["a/x"]));
    assert_eq!(edits("set -o errexit; cd a; rm x"), e(&["a/x"]));
    assert_eq!(edits("set -eo pipefail; cd a; rm x"), e(&["a/x"]));
    assert_eq!(edits("set -uo errexit; cd a; rm x"), e(&["a/x"]));
    assert_eq!(edits("cd a && rm x"), e(&["a/x"]));
    // Not under errexit: `set +e`, `set -- -e` (that is `$1`), `set
    // x -e`, `set --e` (refused), `set -u`, a `set -e` in a block.
    for s in [
        "set -e; set +e; cd a; rm x",
        "set -e; set +o errexit; cd a; rm x",
        "set -- -e; cd a; rm x",
        "set - -e; cd a; rm x",
        "set x -e; cd a; rm x",
        "set --e; cd a; rm x",
        "set -u; cd a; rm x",
        "set -o pipefail errexit; cd a; rm x",
        "if true; then set -e; fi; cd a; rm x",
        "cd a; rm x",
        // A `cd` with an assignment before it is no lone `cd`.
        "FOO=1 cd a && rm x",
    ] {
        assert_eq!(edits(s), e(&["x", "a/x"]), "{s}");
    }
    // `cd DIR || true` doubles the folders, up to a bound.
    let cds = |n: usize| {
        let mut s: String = (0..n).map(|k| format!("cd d{k} || true; ")).collect();
        s.push_str("rm x");
        s
    };
    assert_eq!(edits(&cds(6)).len(), 64);
    assert!(analyze(&cds(7)).opaque.is_some());
    // `cd`'s options are not its folder.
    assert_eq!(edits("cd -P a && rm x"), e(&["a/x"]));
    assert_eq!(edits("cd /abs && rm x"), e(&["/abs/x"]));
}

/// A `cd` to a folder only known at run time, or `cd -`, leaves the
/// folder unknown: a relative path is then no path the rules can see.
#[test]
fn an_unknown_folder() {
    for s in ["cd $d; rm x", "cd -; rm x", "cd; rm x", "cd -P; rm x"] {
        assert!(analyze(s).opaque.is_some(), "{s}");
        // Without a relative path the folder does not matter.
        let quiet = s.replace("rm x", "rm /tmp/x");
        assert_eq!(analyze(&quiet).opaque, None, "{quiet}");
    }
}

/// Redirections: what they read and write, and what makes them opaque.
#[test]
fn redirections_read_and_write() {
    let edits = |s: &str| files(s).1;
    let reads = |s: &str| files(s).0;
    assert_eq!(reads("cat - a"), ["Read(a)"]);
    assert_eq!(edits("echo x >&out"), ["Edit(out)"]);
    assert_eq!(edits("echo x >&2"), Vec::<String>::new());
    assert_eq!(edits("echo x >&-"), Vec::<String>::new());
    assert_eq!(edits("echo x 2>&1 >/dev/null"), Vec::<String>::new());
    assert_eq!(
        edits("echo x >/dev/fd/2 >/dev/stderr"),
        Vec::<String>::new()
    );
    assert_eq!(edits("echo x >/dev/fdx"), ["Edit(/dev/fdx)"]);
    for body in ["$(x)", "${x}", "$[1]", "`x`"] {
        assert!(expands_code(body), "{body}");
    }
    assert!(!expands_code("$x and $y"));
    assert_eq!(edits("echo x &>log"), ["Edit(log)"]);
    let why = |s: &str| analyze(s).opaque.unwrap_or_default();
    for (s, path) in [
        ("echo x > $f", "$f"),
        ("echo x > *.txt", "*.txt"),
        ("echo x &> $f", "$f"),
        ("echo x &> *.log", "*.log"),
    ] {
        assert_eq!(
            why(s),
            format!("it writes to `{path}`, a path only known when the script runs"),
            "{s}"
        );
    }
    assert_eq!(
        why("cat < $f"),
        "it reads from `$f`, a path only known when the script runs"
    );
    assert_eq!(
        why("echo x >& $f"),
        "a redirection to a target only known when the script runs"
    );
    // A quoted heredoc is data: nothing in it runs.
    assert_eq!(cmds("cat <<'EOF'\n$(rm x)\nEOF"), ["cat"]);
    assert_eq!(cmds("cat <<EOF\n$(rm x)\nEOF"), ["rm x", "cat"]);
}

/// Each file a script names is a signature per folder it may be in:
/// past the bound, the script is opaque.
#[test]
fn the_bound_on_files_named() {
    let script = |files: usize| {
        let mut s: String = (0..6).map(|k| format!("cd d{k} || true; ")).collect();
        s.push_str("cat");
        for f in 0..files {
            s.push_str(&format!(" f{f}"));
        }
        s
    };
    // 64 folders times 64 files is the bound.
    assert_eq!(analyze(&script(64)).opaque, None);
    assert_eq!(
        analyze(&script(65)).opaque.as_deref(),
        Some("too complex to check safely (it names more than 4096 files and folders)")
    );
}

/// A loop variable bound to literal words gives each of its values.
#[test]
fn loop_variables_bound_to_words() {
    let edits = |s: &str| files(s).1;
    assert_eq!(
        edits("for f in a b; do rm src/${f}.rs; done"),
        ["Edit(src/a.rs)", "Edit(src/b.rs)"]
    );
    assert_eq!(edits("for f in a; do rm $f$f; done"), ["Edit(aa)"]);
    // Up to 64 values; past them, or with a substitution, the word
    // is not known.
    let eight = "1 2 3 4 5 6 7 8";
    assert_eq!(
        edits(&format!(
            "for f in {eight}; do for g in {eight}; do rm $f$g; done; done"
        ))
        .len(),
        64
    );
    assert!(
        analyze(&format!(
            "for f in {eight} 9; do for g in {eight}; do rm $f$g; done; done"
        ))
        .opaque
        .is_some()
    );
    assert!(
        analyze("for f in a; do rm \"$(echo x)$f\"; done")
            .opaque
            .is_some()
    );
    assert!(
        analyze("for f in a; do rm \"`echo x`$f\"; done")
            .opaque
            .is_some()
    );
}

/// A `cd` above the start or elsewhere on the machine reads the folder
/// it enters: what runs there uses it unnamed (`git status`, `ls`,
/// `make`). Beneath the start, nothing is added. `ls` reads what it lists.
#[test]
fn a_cd_away_reads_the_folder_it_enters() {
    assert_eq!(files("cd .. && git status").0, ["Read(/)"]);
    assert_eq!(files("cd /srv/other && make").0, ["Read(/srv/other)"]);
    assert_eq!(files("cd sub && git status").0, Vec::<String>::new());
    assert_eq!(files("cd sub && cd ../.. && ls").0, ["Read(/)"]);
    // Each folder the script may be in (`|| true` may stay).
    assert_eq!(files("cd /a || true; make").0, ["Read(/a)"]);
    assert_eq!(files("ls -la ../x /etc").0, ["Read(/x)", "Read(/etc)"]);
    assert_eq!(files("ls -I '*.o' src").0, ["Read(src)"]);
}
