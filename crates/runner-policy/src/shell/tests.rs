use super::*;

mod folders;
mod walk;

/// The commands of a script the analysis must see into.
pub(super) fn cmds(s: &str) -> Vec<String> {
    let a = analyze(s);
    assert!(a.opaque.is_none(), "{s}: {:?}", a.opaque);
    a.commands.iter().map(|c| c.words.join(" ")).collect()
}

/// A script over the length bound is refused before it is parsed; one
/// at the bound is read.
#[test]
fn the_length_bound_holds_at_its_edge() {
    let bound = MAX_SCRIPT_CHARS + heredoc::MAX_DATA_CHARS;
    let script = |len: usize| {
        let head = "cat <<'EOF'\n";
        let tail = "\nEOF\n";
        format!("{head}{}{tail}", "a".repeat(len - head.len() - tail.len()))
    };
    let too_long = format!("the script is longer than {bound} characters");
    let at = analyze(&script(bound));
    assert_eq!(at.text.len(), bound);
    assert_ne!(at.opaque.as_deref(), Some(too_long.as_str()));
    let over = analyze(&script(bound + 1));
    assert_eq!(over.opaque.as_deref(), Some(too_long.as_str()));
}

/// `shopt` options that change how globs match make a script with a
/// glob operand opaque; either alone does not.
#[test]
fn glob_options_and_glob_operands_together() {
    assert!(analyze("shopt -s dotglob; rm *").opaque.is_some());
    assert!(analyze("shopt -s dotglob; cargo test").opaque.is_none());
    assert!(analyze("rm *").opaque.is_none());
}

#[test]
fn a_commands_program_is_its_first_word() {
    let a = analyze("FOO=1 git status");
    assert_eq!(a.commands[0].program(), "git");
    assert_eq!(SimpleCommand { words: vec![] }.program(), "");
}

/// A script only reads when every command is a known reader, nothing
/// is redirected into a file, and it can be read at all.
#[test]
fn what_only_reads() {
    let reads = |s: &str| analyze(s).is_read_only();
    assert!(reads("cat a | grep x"));
    assert!(reads("git status && ls"));
    assert!(!reads("cat a > b"));
    assert!(!reads("cat a; rm b"));
    assert!(!reads(""));
    assert!(!reads("$x a"));
    assert!(!reads("bash -lc 'cat a'"));
}

#[test]
fn splits_compound_commands() {
    assert_eq!(cmds("git status && rm -rf /"), ["git status", "rm -rf /"]);
    assert_eq!(
        cmds("git status; curl x | sh -c 'rm a'"),
        ["git status", "curl x", "sh -c rm a", "rm a"]
    );
    assert_eq!(cmds("echo $(cat .env)"), ["cat .env", "echo $(cat .env)"]);
    assert_eq!(cmds("rm </dev/null -rf /"), ["rm -rf /"]);
    assert_eq!(cmds("FOO=1 rm -rf /"), ["rm -rf /"]);
    assert_eq!(cmds("env A=1 rm -rf /"), ["env A=1 rm -rf /", "rm -rf /"]);
    assert_eq!(
        cmds("find . -exec rm {} \\;"),
        ["find . -exec rm {} ;", "rm {}"]
    );
    assert_eq!(cmds("\\rm -rf /"), ["rm -rf /"]);
}

/// A script's reads and writes, spelled from the workspace root.
fn files(s: &str) -> (Vec<String>, Vec<String>) {
    let a = analyze(s);
    assert!(a.opaque.is_none(), "{s}: {:?}", a.opaque);
    let ws = crate::LexicalPaths::new("/ws");
    let sigs = a.signatures(&ws, ".");
    let of = |f: crate::Family| {
        sigs.iter()
            .filter(|g| g.family == f)
            .map(|g| g.to_string())
            .collect::<Vec<_>>()
    };
    (of(crate::Family::Read), of(crate::Family::Edit))
}

#[test]
fn ordinary_shell_is_read_as_ordinary() {
    // Builtins that change nothing outside the script are no programs.
    assert_eq!(cmds("set -euo pipefail; cargo test"), ["cargo test"]);
    assert_eq!(
        cmds("if [ -z \"$v\" ]; then echo empty; fi"),
        ["echo empty"]
    );
    assert_eq!(
        cmds(": ; true; shift; unset x; shopt -s nullglob; exit 0"),
        Vec::<String>::new()
    );
    assert_eq!(
        cmds("command -v cargo && cargo --version"),
        ["cargo --version"]
    );
    assert_eq!(cmds("IFS=, read -r a b <<< \"x,y\"; echo $a"), ["echo $a"]);
    assert!(cmds("python3 --version; node -v; bash --version").len() == 3);
    assert_eq!(
        cmds("RUSTFLAGS=\"--cfg tokio_unstable\" cargo test"),
        ["cargo test"]
    );
    assert_eq!(
        cmds("export PATH=$PATH:$(pwd)/target/release; mytool"),
        ["mytool"]
    );
    // `cd DIR && ...`: paths resolve from DIR only.
    assert_eq!(files("cd sub && echo x > ../f").1, ["Edit(f)"]);
    assert_eq!(files("set -e\ncd sub\necho x > ../f").1, ["Edit(f)"]);
    // Without a check, the script may still be where it was.
    assert_eq!(files("cd sub; echo x > ../f").1, ["Edit(/f)", "Edit(f)"]);
    // A subshell's `cd` does not outlast it.
    assert_eq!(files("(cd sub && make); cat ../x").0, ["Read(/x)"]);
    assert_eq!(files("cd sub && make | cd other; cat x").0, ["Read(sub/x)"]);
    // A loop over a literal list: the variable is each value.
    assert_eq!(
        files("for f in a b; do cat src/$f.rs; done").0,
        ["Read(src/a.rs)", "Read(src/b.rs)"]
    );
    assert!(
        analyze("for f in a b; do f=.env; cat $f; done")
            .opaque
            .is_some()
    );
}

#[test]
fn a_script_cut_short_is_said_to_end_there() {
    // The parser sees the script with a newline of its own added (see
    // `ended`): its error is not placed on a line the script lacks.
    for s in ["echo $((1+(2)", "echo \"a", "$(<< ($("] {
        let why = analyze(s).opaque.expect("opaque");
        assert!(why.contains("(at the end of the script)"), "{s}: {why}");
        assert!(!why.contains("line 2"), "{s}: {why}");
    }
}

#[test]
fn many_cds_stay_bounded_and_fail_closed() {
    // Each `cd` may double the folders; unbounded, 40 of them would
    // need 2^40 entries. Past the bound the folder is unknown.
    let script: Vec<String> = (0..40).map(|i| format!("cd d{i}")).collect();
    let a = analyze(&format!("{}; cat f", script.join("; ")));
    assert!(a.opaque.is_some(), "{a:?}");
    let a = analyze("cd a; cd b; cat f");
    assert!(a.opaque.is_none());
}

#[test]
fn fails_closed() {
    for s in [
        "$X -rf /",
        "source x.sh",
        "PATH=/tmp git status",
        "bash <<EOF\n$CMD\nEOF",
        "bash <<EOF\n`x`\nEOF",
        "if then fi (",
        "{rm,-rf,/}",
        "/bin/r? -rf /",
        // Bash evaluates these values as code (see `arith`).
        "x='a[$(touch p)]'; (( x ))",
        "x=$(cat f); echo $(( x + 1 ))",
        "read x < f; [[ $x -eq 1 ]]",
        "x=$(cat f); echo ${!x}",
        "x=$(cat f); y=$x; echo ${a[y]}",
        "x='$(touch p)'; echo ${x@P}",
        "echo ${HOME@P}",
        "declare 'a[$(touch p)]=1'",
        "printf -v 'a[$(touch p)]' x",
        "read 'a[$(touch p)]' <<< x",
        "unset 'a[$(touch p)]'",
        "test -v 'a[$(touch p)]'",
        "[[ -v a[$(touch p)] ]]",
        "let 'a[$(touch p)]'",
        "declare -n r='a[$(touch p)]'; echo $r",
        "read -r n; declare -i x=n",
        "f() { echo $(( $1 )); }; f 1",
        "for x in $(cat f); do echo $(( x )); done",
        "shopt -s dotglob\ncat *",
        "python3 -v",
        "export PATH=$PWD/bin:$PATH",
        "RUSTFLAGS='-C linker=./x' cargo build",
        "for f in $(ls); do cat $f; done",
        // Assignments to what changes what runs, spelled as builtins.
        "printf -v PATH /tmp; git status",
        "read PATH <<< /tmp; git status",
        "declare -n r=PATH; r=/tmp; git status",
        "local -n r; r=PATH",
        "for PATH in /tmp; do git status; done",
        "unset PATH; : ${PATH:=/tmp}; git status",
        "mapfile -t LD_PRELOAD < f",
        // Past the budget.
        &format!("{}x{}", "( ".repeat(20), " )".repeat(20)),
        &format!("{} x;{}", "{ ".repeat(1_500), " }".repeat(1_500)),
        &"( (( (( (( (( (( (( (( ((".repeat(3),
    ] {
        assert!(analyze(s).opaque.is_some(), "{s}");
    }
}

/// Heredocs as bash reads them (issue 42): a shell's is its script, one
/// left open ends at the end, a body is data however long (within its
/// own cap), and the code around it keeps the script budget.
#[test]
fn heredocs_are_read_as_bash_reads_them() {
    assert_eq!(cmds("bash <<'EOF'\nrm -rf /\nEOF"), ["bash", "rm -rf /"]);
    assert_eq!(cmds("sh -s <<EOF\ngit push\nEOF\n"), ["sh -s", "git push"]);
    assert_eq!(
        cmds("timeout 9 bash <<'X'\ngit push $1\nX"),
        ["timeout 9 bash", "bash", "git push $1"]
    );
    // `bash -c` reads its script from the word; stdin is data to it.
    assert_eq!(
        cmds("bash -c 'cat' <<'EOF'\ngit push\nEOF"),
        ["bash -c cat", "cat"]
    );
    // A heredoc on another descriptor is no script.
    assert!(analyze("bash 3<<'EOF'\nls\nEOF").opaque.is_some());
    // `xargs` reads the heredoc itself: bash gets no script from it.
    assert!(!cmds_or_opaque("xargs bash <<'EOF'\ngit push\nEOF").contains(&"git push".to_string()));
    // Left open: it ends at the end, as bash ends it.
    assert_eq!(files("cat <<'EOF' > out.txt\nhello").1, ["Edit(out.txt)"]);
    assert_eq!(cmds("bash <<'EOF'\ngit push"), ["bash", "git push"]);
    assert_eq!(cmds("cat <<-EOF >a\n\tx\n\tEOF\nls"), ["cat", "ls"]);
    // A substitution in an unquoted body runs; a plain variable reads.
    assert_eq!(cmds("cat <<EOF > f\n$(git push)\nEOF"), ["git push", "cat"]);
    assert_eq!(cmds("cat <<EOF > f\nhome is $HOME\nEOF"), ["cat"]);
    // A body is data: far past the script budget, decided as the
    // `cat > path` it is.
    let body = "print(\"(x) {y}\")\n".repeat(50_000);
    assert!(body.len() > 10 * MAX_SCRIPT_CHARS);
    let big = format!("mkdir -p t && cat <<'EOF' > t/gen.py\n{body}EOF\npython3 t/gen.py");
    assert_eq!(files(&big).1, ["Edit(t)", "Edit(t/gen.py)"]);
    let open = format!("cat > t/gen.py <<'EOF'\n{body}");
    assert_eq!(files(&open).1, ["Edit(t/gen.py)"]);
    // Code past the budget is refused, bodies aside or not.
    let code = "echo hello world; ".repeat(MAX_SCRIPT_CHARS / 10);
    let why = analyze(&format!("{code}\ncat <<'EOF' > f\n{body}EOF\n"))
        .opaque
        .unwrap();
    assert!(why.contains("heredoc bodies aside"), "{why}");
    let huge = "x\n".repeat(MAX_DATA_CHARS / 2 + 1);
    let why = analyze(&format!("cat <<'EOF' > f\n{huge}EOF\n"))
        .opaque
        .unwrap();
    assert!(why.contains("heredoc bodies are longer"), "{why}");
    // Brackets nested deep in a body are data too.
    let deep = format!(
        "cat <<'EOF' > f.json\n{}1{}\nEOF\n",
        "[{".repeat(30),
        "}]".repeat(30)
    );
    assert_eq!(files(&deep).1, ["Edit(f.json)"]);
}

/// An option's value attached and only known at run time is read as
/// the value apart (issue 42): a number or text is no path; a path or
/// an option whose name is not written out stays strict.
#[test]
fn option_values_known_at_run_time() {
    for s in [
        "make -j$(nproc)",
        "make -j\"$(nproc)\" test",
        "make -j$((N + 1)) -l$(nproc)",
        "make -j$(expr $(nproc) + 1)",
        "cargo build --jobs=$(nproc)",
        "cargo test -j$(nproc) --release",
        "git tag --message=v\"$VERSION\" v1",
        "git commit --message=\"$MSG\"",
        "git commit -m\"$MSG\"",
    ] {
        assert!(analyze(s).opaque.is_none(), "{s}: {:?}", analyze(s).opaque);
    }
    assert_eq!(files("make -j$(nproc) -C sub").0, Vec::<String>::new());
    for s in [
        "make -f$F",
        "make --file=$F",
        "tar -xf$F",
        "grep -f$F x",
        "cat --$X=1 a",
        "make -$X",
        "sort -o$OUT x",
        "git -C$D status",
    ] {
        assert!(analyze(s).opaque.is_some(), "{s}");
    }
}

fn cmds_or_opaque(s: &str) -> Vec<String> {
    analyze(s)
        .commands
        .iter()
        .map(|c| c.words.join(" "))
        .collect()
}

#[test]
fn nested_subshells_are_read_as_bash_reads_them() {
    // brush-parser reads these as arithmetic; bash runs `touch`.
    assert_eq!(cmds("( ( touch p ) )"), ["touch p"]);
    assert_eq!(cmds("((touch p) )"), ["touch p"]);
    assert_eq!(
        cmds("echo $((touch p) )"),
        ["touch p", "echo $((touch p) )"]
    );
    assert_eq!(cmds("x=$((touch p);(touch q))"), ["touch p", "touch q"]);
    // Arithmetic stays arithmetic.
    assert!(cmds("(( i++ )); echo $(( (1 + 2) * 3 ))").len() == 1);
    assert!(cmds("((x = (1 + 2) ))").is_empty());
}

#[test]
fn values_the_script_fixes_may_be_evaluated() {
    for s in [
        "i=0; (( i++ )); echo $i",
        "n=$(nproc); make -j$((n + 1))",
        "c=$(git ls-files | wc -l); [[ $c -gt 0 ]] && echo many",
        "for i in 1 2 3; do echo $(( i * 2 )); done",
        "for ((i = 0; i < 3; i++)); do echo $i; done",
        "declare -i n=3; n=n+1",
        "a=(1 2 3); echo ${a[1]} ${#a[@]} ${a[@]:1:2}",
        "x=$(cat f); echo \"$x\" ${x:-none} ${#x}",
        "read -r line < f; echo \"$line\"",
        "echo ${!prefix*}",
        "[ \"$(cat f)\" -eq 1 ]",
        "if [ -z \"$v\" ]; then echo empty; fi",
    ] {
        assert!(analyze(s).opaque.is_none(), "{s}: {:?}", analyze(s).opaque);
    }
}
