//! Bash is the reference: the shell analysis checked against what real
//! bash does with the same script.
//!
//! Each case runs `bash -c SCRIPT` in a throwaway workspace, confined by
//! the runner's own sandbox (writes only in the case's folder, no
//! network), with an empty environment and a PATH of recording shims:
//! every program name on this machine is a link to one script that logs
//! its argv and exits 0, so nothing real runs. A few wrappers that only run
//! other programs (`env`, `timeout`, `xargs`, `find` without actions that
//! write ...) and `cat` pass through to the real program after logging,
//! so that what they run is recorded too, and `bash`/`sh` pass through to
//! real bash. Then:
//! - every program that ran must be a command of the analysis (its words
//!   equal, a word only known at run time standing for any words);
//! - every file created, changed or removed in the workspace must be under
//!   an `Edit` signature.
//!
//! An opaque analysis (one signature only an exact rule allows) covers
//! everything without backstops. With them, an opaque plain list is
//! decided command by command ([`runner_policy::simple_commands`]), so
//! every program bash ran must be the program of one of those commands.
//!
//! The cases: every `bash` row of the attack corpora, generated scripts
//! (a payload in every context that runs commands, nested two deep), data
//! that reaches arithmetic from a file, and mutants of all of those.
//! `RUNNER_DIFF_MUTANTS` (default 1,200) and `RUNNER_DIFF_SEED` change the
//! mutants; `scripts/fuzz-gate` runs many more.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use runner_policy::words::base_name;
use runner_policy::{Family, LexicalPaths, shell, simple_commands};

/// Programs that only start other programs (or only read), run for real
/// after the shim logs them, so that the programs they start are logged.
const PASS_THROUGH: &[&str] = &[
    "env", "timeout", "nice", "nohup", "stdbuf", "setsid", "xargs", "find", "cat",
];

/// Program names the cases use that this machine may not have.
const EXTRA_NAMES: &[&str] = &[
    "cargo", "rg", "python3", "node", "npm", "git", "curl", "wget", "sudo", "doas", "perl", "ruby",
    "jq", "make", "docker", "deno", "nu", "pwned", "unbuffer", "watch",
];

/// Where a payload goes in a context.
const HOLE: &str = "@@";

/// Contexts that run the command put in `@@`, one for each way bash has
/// to run a command, substitute its output or evaluate text as code.
const CONTEXTS: &[&str] = &[
    "@@",
    "( @@ )",
    "( ( @@ ) )",
    "((@@) )",
    "( (@@) )",
    "{ @@; }",
    "{ { @@; }; }",
    "$(@@)",
    "echo $(@@)",
    "echo \"$(@@)\"",
    "echo `@@`",
    "x=$(@@)",
    "x=`@@`",
    "echo $((@@) )",
    "x=$((@@);(@@))",
    ": $(( $(@@) ))",
    "(( a[$(@@)] ))",
    "a[$(@@)]=1",
    "declare a[$(@@)]=1",
    "printf -v 'a[$(@@)]' x",
    "read 'a[$(@@)]' <<< x",
    "unset 'a[$(@@)]'",
    "test -v 'a[$(@@)]'",
    "[[ -v a[$(@@)] ]]",
    "let 'a[$(@@)]'",
    "x='a[$(@@)]'; (( x ))",
    "x='a[$(@@)]'; echo $(( x ))",
    "x='a[$(@@)]'; echo $(( $x ))",
    "x='a[$(@@)]'; echo ${!x}",
    "x='$(@@)'; echo ${x@P}",
    "x='a[$(@@)]'; [[ $x -eq 1 ]]",
    "x='a[$(@@)]'; declare -n r=$x; echo $r",
    "x='a[$(@@)]'; declare -i y; y=$x",
    "x='a[$(@@)]'; arr=(1); echo ${arr[$x]}",
    "x='a[$(@@)]'; echo ${y:$x}",
    "x='a[$(@@)]'; y=$x; (( y ))",
    "f() { (( $1 )); }; f 'a[$(@@)]'",
    "trap '@@' EXIT",
    "if @@; then :; fi",
    "if true; then @@; fi",
    "while @@; do break; done",
    "case x in x) @@;; esac",
    "f() { @@; }; f",
    "function f { @@; }; f",
    "cat <(@@)",
    "echo >(@@)",
    "@@ | cat",
    "cat <<< \"$(@@)\"",
    "cat <<EOF\n$(@@)\nEOF",
    "cat <<'EOF'\n$(@@)\nEOF",
    "coproc @@",
    "coproc c { @@; }",
    "exec 3< <(@@)",
    "shopt -s expand_aliases\nalias x='@@'\nx",
    "eval '@@'",
    "eval \"@@\"",
    "bash -c '@@'",
    "sh -c '@@'",
    "bash <(echo '@@')",
    "sh /dev/stdin <<< '@@'",
    "bash -e <(printf '%s' '@@')",
    "cd .. && @@",
    "env @@",
    "timeout 5 @@",
    "nice @@",
    "nohup @@",
    "echo a | xargs @@",
    "find . -maxdepth 0 -exec @@ \\;",
    "for i in 1; do @@; done",
    "for ((i=0;i<1;i++)); do @@; done",
    "select x in a; do @@; break; done <<< 1",
    "[[ $(@@) ]]",
    "echo ${x:-$(@@)}",
    "echo \"${x:-$(@@)}\"",
    "echo ${x/$(@@)/y}",
    "for i in $(@@); do :; done",
    "PS4='$(@@)'; set -x; :",
    "! @@",
    "time @@",
    "@@ & wait",
    "@@ && :",
    "false || @@",
    "x=1 @@",
    "declare -a b=($(@@))",
    "[ \"$(@@)\" ]",
    "exec @@",
    "command @@",
    "builtin eval '@@'",
    "mapfile -t a < <(@@)",
    "read x < <(@@)",
    "while read l; do :; done < <(@@)",
    "{ @@; } 2>/dev/null",
    "( @@ ) > /dev/null",
    "x=$(@@) y=$(@@)",
];

/// What the payload does: runs a program, or writes a file by itself.
const PAYLOADS: &[&str] = &["touch pwned", "echo x > pwned"];

/// Scripts that read a value from a file the workspace holds (`f`, whose
/// text is `a[$(touch pwned)]`) into a context that evaluates it.
const DATA_CASES: &[&str] = &[
    "x=$(cat f); (( x ))",
    "x=$(cat f); echo $(( x + 1 ))",
    "read -r x < f; [[ $x -gt 0 ]]",
    "x=$(cat f); echo ${!x}",
    "mapfile -t m < f; (( m[0] ))",
    "x=$(cat f); y=$x; a=(1); echo ${a[y]}",
    "while read -r x; do echo $(( x )); done < f",
    "for x in $(cat f); do let x; done",
    "x=$(cat f); declare -i n; n=$x",
    "IFS= read -r x < f; unset \"$x\"",
    "x=$(cat f); printf -v \"$x\" 1",
    "x=$(cat f); echo ${x@P}",
];

/// The readings this round added (issue 35), run under bash like the rest:
/// a `cd` whose failure stops what follows, subshells that keep their `cd`,
/// loops over literal lists, builtins that are no programs, variables that
/// name a program, a PATH appended to.
const READING_CASES: &[&str] = &[
    "cd sub && echo x > ../pwned",
    "cd sub/deep && touch ../pwned",
    "set -e\ncd sub\necho x > ../pwned",
    "cd nothere && echo x > ../pwned",
    "(cd sub && :); echo x > pwned",
    "cd sub | :; echo x > pwned",
    "echo $(cd sub; echo x > ../pwned)",
    "for f in pwned other; do touch $f; done",
    "for f in a b; do echo x > src/$f.rs; done",
    "for f in pwned; do f=other; touch $f; done",
    "set -euo pipefail; [ -d src ] && touch pwned",
    "test -e f && command -v touch && touch pwned",
    "CARGO_TARGET_X_RUNNER=touch cargo test",
    "export PATH=$PATH:/nothere; touch pwned",
    "IFS=, read -r a b <<< \"x,pwned\"; touch $b",
    "x=pwned; read -r y <<< \"$x\"; touch \"$y\"",
];

/// Scripts whose end the analysis reads with a newline of its own added
/// (brush-parser looped for ever on a here-document cut short): a last
/// word ending in a backslash, an escaped newline at the end, a
/// here-document and a comment at the end of the input.
const ENDING_CASES: &[&str] = &[
    "touch pwned\\",
    "touch pwned \\",
    "echo x > pwned\\\n",
    "touch pwned\\\\",
    "cat <<EOF > pwned\nx\nEOF",
    "cat <<'' > pwned\nx",
    "cat <<EOF\n$(touch pwned)\nEOF",
    "touch pwned # \\",
];

/// The shell as agents write it (issue 42), plain and hostile: heredocs a
/// shell reads as its script, heredocs left open, data bodies, option
/// values only known at run time, interactive shells, activation scripts,
/// background jobs and their cleanup. (Login shells run /etc/profile,
/// which runs programs of the machine and resets PATH: not comparable
/// here; their decisions are in crates/runner-policy/tests/decisions.rs.)
const AGENT_SHELL_CASES: &[&str] = &[
    "bash <<'EOF'\ntouch pwned\nEOF",
    "bash <<EOF\ntouch pwned\nEOF",
    "bash <<EOF\n$(touch pwned)\nEOF",
    "bash <<EOF\necho $HOME > pwned\nEOF",
    "sh -s <<EOF\necho x > pwned\nEOF",
    "timeout 5 bash <<'EOF'\ntouch pwned\nEOF",
    "bash <<'EOF'\ntouch pwned",
    "bash -s x <<'EOF'\ncat <<'IN' > pwned\n$1\nIN\nEOF",
    "bash -c 'cat' <<'EOF'\ntouch pwned\nEOF",
    "bash 3<<'EOF'\ntouch pwned\nEOF",
    "echo a | xargs bash <<'EOF'\ntouch pwned\nEOF",
    "cat <<'EOF' > pwned\nx",
    "cat <<EOF > out\n$HOME and $1\nEOF\ntouch pwned",
    "cat <<EOF > out\n${x:-$(touch pwned)}\nEOF",
    "cat <<-EOF > out\n\tx\n\tEOF\ntouch pwned",
    "cat <<EOF > out\nx\\\nEOF\ntouch pwned\nEOF",
    "cat <<'A' > out; cat <<B > out2\n1\nA\n$(touch pwned)\nB",
    "python3 <<'EOF'\nimport os\nEOF\ntouch pwned",
    "python3 <<EOF\n$(touch pwned)\nEOF",
    "node <<'EOF' > out\nconsole.log(1)\nEOF",
    "make -j$(touch pwned)",
    "make -j$(nproc) -l$(echo 2) test",
    "make -j$((2 + 1)) && touch pwned",
    "git tag --message=v\"$(touch pwned)\" v1",
    "cargo build --jobs=$(echo 2)",
    "make -f$(echo pwned)",
    "head -n$(echo 1) README.md > pwned",
    "bash -ic 'touch pwned'",
    "bash -i <<'EOF'\ntouch pwned\nEOF",
    "source act.sh",
    ". ./act.sh; touch other",
    "touch pwned & wait",
    "nohup touch pwned &",
    "nohup touch pwned > /dev/null 2>&1 & echo $!",
    "sleep 0 & disown; touch pwned",
    "sleep 1 & PID=$!; kill $PID; wait $PID; touch pwned",
    "( touch pwned & ); wait",
    "touch pwned &>/dev/null &",
    "timeout 5 touch pwned || echo failed",
    "{ sleep 1; touch pwned; } & kill %1",
    // The shapes around inline code (plain lists under backstops): `cd`,
    // `timeout`, a harmless assignment; and their hostile neighbours.
    "cd sub && python3 -c 'print(1)' > out",
    "timeout 5 python3 -c 'print(1)' || echo $?",
    "timeout -s KILL 5 python3 -c 'print(1)'",
    "A=1 python3 -c 'print(1)'",
    "cd sub; A=1 timeout 5 python3 -c 'print(1)' 2>&1 || echo failed",
    "timeout 5 sh -c 'touch pwned'",
    "timeout 5 xargs touch < list",
    "cd $(touch pwned) && python3 -c 'print(1)'",
    "A=$(touch pwned) python3 -c 'print(1)'",
    "PATH=. python3 -c 'print(1)'",
    "cd .. && touch pwned",
    // A shell's `-c` script around inline code: the shell and each
    // command of its script; and the shapes that hide a command from it.
    "bash -c 'cd sub && python3 -c \"print(1)\" > out'",
    "bash -lc \"python3 - <<'PY'\nprint(1)\nPY\" 2>&1 | cat",
    "bash -c 'python3 -c 1; touch pwned'",
    "bash -c \"sh -c 'python3 -c 1 && touch pwned'\"",
    "sh -ec \"python3 -c 1 \\\"x\\\" ; touch pwned\"",
    "bash -c 'python3 -c 1; $0 pwned' touch",
    "bash -c \"python3 -c 1; $(touch pwned)\"",
    "bash -c 'python3 -c 1 | xargs touch'",
    "bash -c 'python3 -c 1' > pwned",
    // A reader of a known producer's paths (issue 73): decided as the
    // reader, no longer opaque; and the writers and shells beside it.
    "find . -name '*.txt' | xargs grep -l x",
    "find src -type f -print0 | xargs -0 wc -l",
    "git ls-files | xargs grep -n x",
    "find . -name x | xargs touch",
    "find . -printf '%p\\n' | xargs grep x",
    "find . -name x | xargs sh -c 'touch pwned'",
    // Loops over a producer's paths, `xargs -I`, and a `find` expression
    // only known at run time (issue 73).
    "for f in $(find src -name '*.rs'); do grep -l x $f; done",
    "find src -name '*.rs' | while read -r f; do wc -l \"$f\"; done",
    "g() { f=pwned; }; for f in $(find src); do g; touch $f; done",
    "find src | while read f; do f=pwned; touch $f; done",
    "find src -name '*.rs' | xargs -I {} grep -l x {}",
    "find . -name x | xargs -I {} touch {}",
    "find . -maxdepth 0 $x-exec touch pwned \\;",
    "find src -print0 | xargs -0 touch",
];

/// The workspace each case starts from.
fn lay_out(ws: &Path) {
    for d in ["src", "sub/deep", ".github/workflows"] {
        std::fs::create_dir_all(ws.join(d)).unwrap();
    }
    for (f, text) in [
        ("src/a.rs", "fn a() {}\n"),
        (".env", "SECRET=1\n"),
        ("README.md", "readme\n"),
        ("sub/deep/x.txt", "x\n"),
        ("f", "a[$(touch pwned)]\n"),
        ("list", "src/a.rs\n"),
        ("act.sh", "touch pwned\n"),
    ] {
        std::fs::write(ws.join(f), text).unwrap();
    }
}

/// A worker's folders: the shims, their log, the case's workspace; and
/// the thread that runs bash in them.
struct Lab {
    spawner: Spawner,
    _dir: tempfile::TempDir,
    log: PathBuf,
    ws: PathBuf,
    home: PathBuf,
    /// Where `log`, `ws` and `home` are, the one folder bash may write in.
    cases: PathBuf,
    /// How many folders were renamed away.
    gone: Cell<usize>,
    /// What the machine's startup files run (`bash -l -c :`), which a
    /// login shell runs before its command.
    startup: Vec<Vec<String>>,
}

impl Lab {
    fn new(names: &[String]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let shims = root.join("shims");
        std::fs::create_dir(&shims).unwrap();
        // The case's folders, and the folders of cases gone by: bash may
        // write only in here.
        let cases = root.join("cases");
        std::fs::create_dir(&cases).unwrap();
        let log = cases.join("log");
        let mut pass = String::new();
        for p in PASS_THROUGH {
            if let Some(real) = real_program(p) {
                if *p == "find" {
                    // find's own writes stay off: only its -exec runs.
                    pass.push_str(&format!(
                        "  find) for a; do case $a in -delete|-fprint*|-fls) exit 0;; esac; done; exec {} \"$@\";;\n",
                        real.display()
                    ));
                } else {
                    pass.push_str(&format!("  {p}) exec {} \"$@\";;\n", real.display()));
                }
            }
        }
        // Each shim process appends to its own file in the log folder: bash
        // line-buffers its stdout, so a printf of an argument holding a
        // newline is several writes, which another shim's record could
        // fall between in a shared file.
        // Run by a shell as a script file (`bash touch`) rather than as a
        // program, the shim is our own file: it records nothing.
        let script = format!(
            "#!/bin/bash\ncase $0 in {shims}/*) ;; *) exit 0;; esac\nn=${{0##*/}}\nprintf '%s\\0' \"$n\" \"$@\" $'\\1' >> {log}/$$\ncase $n in\n  bash) exec /bin/bash \"$@\";;\n  sh) exec -a sh /bin/bash \"$@\";;\n{pass}esac\nexit 0\n",
            log = log.display(),
            shims = shims.display()
        );
        let shim = root.join("shim");
        std::fs::write(&shim, script).unwrap();
        std::fs::set_permissions(&shim, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        for n in names {
            let _ = std::os::unix::fs::symlink(&shim, shims.join(n));
        }
        let home = cases.join("home");
        let ws = cases.join("ws");
        for d in [&home, &ws, &log] {
            std::fs::create_dir(d).unwrap();
        }
        let mut lab = Self {
            spawner: Spawner::start(&cases, &ws, &shims, &home),
            ws,
            _dir: dir,
            log,
            home,
            cases,
            gone: Cell::new(0),
            startup: Vec::new(),
        };
        let (mut startup, _) = lab.run("bash -l -c :");
        startup.extend(lab.run("bash -i -c :").0);
        startup.retain(|argv| argv[0] != "bash");
        lab.startup = startup;
        lab
    }

    /// Runs one script; how it was compared, and a finding when bash did
    /// what the analysis missed.
    fn case(&self, script: &str) -> (Compared, Result<(), String>) {
        let script = script.replace("$WS", &self.ws.display().to_string());
        let (ran, changed) = self.run(&script);
        let analysis = shell::analyze(&script);
        let compared = Compared::of(&script, &analysis, &self.ws);
        (compared, self.check(&script, &analysis, &ran, &changed))
    }

    /// Runs `script` under bash in a fresh workspace and home folder: the
    /// programs that ran, and the files changed (workspace-relative, or
    /// absolute in `$HOME`, which a script may write through `~`).
    fn run(&self, script: &str) -> (Vec<Vec<String>>, Vec<String>) {
        // New folders under the same names: whatever the last case left
        // running goes on writing in the old ones, which are renamed away
        // (and removed) rather than emptied.
        for fresh in [&self.ws, &self.home, &self.log] {
            let n = self.gone.get();
            self.gone.set(n + 1);
            let old = self.cases.join(format!("gone-{n}"));
            std::fs::rename(fresh, &old).unwrap();
            std::fs::create_dir(fresh).unwrap();
            let _ = std::fs::remove_dir_all(&old);
        }
        lay_out(&self.ws);
        let before = snapshot(&self.ws);
        let home_before = snapshot(&self.home);
        self.spawner.run(script);
        let mut changes = changed(&before, &snapshot(&self.ws));
        changes.extend(
            changed(&home_before, &snapshot(&self.home))
                .into_iter()
                .map(|rel| self.home.join(rel).display().to_string()),
        );
        (read_log(&self.log), changes)
    }

    /// What bash did against what `analysis` says `script` does.
    fn check(
        &self,
        script: &str,
        analysis: &shell::ShellAnalysis,
        ran: &[Vec<String>],
        changed: &[String],
    ) -> Result<(), String> {
        let sigs = analysis.signatures(&LexicalPaths::new(&self.ws), ".");
        // A login or interactive shell runs the machine's startup files
        // first and keeps a history in its home: what only confinement
        // answers for (the analysis's `startup_files`).
        let startup = analysis.startup_files.is_some();
        let ran: Vec<&Vec<String>> = ran
            .iter()
            .filter(|argv| !(startup && self.startup.contains(argv)))
            .collect();
        if analysis.opaque.is_some() || sigs.iter().any(opaque) {
            return Self::check_opaque(script, &ran);
        }
        let mut missed = Vec::new();
        let home = self.home.display().to_string();
        let changed: Vec<&String> = changed
            .iter()
            .filter(|p| !(startup && p.starts_with(&home)))
            .collect();
        let behind_xargs = analysis
            .commands
            .iter()
            .any(|c| base_name(c.program()) == "xargs");
        for argv in ran {
            let covered = analysis.commands.iter().any(|c| {
                base_name(c.program()) == argv[0]
                    && words_cover(&c.words[1..], &argv[1..], behind_xargs)
            });
            if !covered {
                missed.push(format!("ran {argv:?}"));
            }
        }
        let edits: Vec<(&str, bool)> = sigs
            .iter()
            .filter(|s| s.family == Family::Edit)
            .filter_map(|s| s.specifier.as_deref().map(|p| (p, s.tree)))
            .collect();
        for path in changed {
            let covered = edits.iter().any(|(p, tree)| {
                p == path || (*tree && (*p == "." || path.starts_with(&format!("{p}/"))))
            });
            if !covered {
                missed.push(format!("changed {path}"));
            }
        }
        if missed.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "{script:?}: {} (analysis: {:?})",
                missed.join(", "),
                analysis
                    .commands
                    .iter()
                    .map(|c| c.words.join(" "))
                    .collect::<Vec<_>>()
            ))
        }
    }

    /// An opaque script: under backstops a plain list is decided command by
    /// command, so what bash ran must be one of those commands' programs
    /// (the shims run nothing behind the programs, but for the wrappers,
    /// which are never such a command).
    fn check_opaque(script: &str, ran: &[&Vec<String>]) -> Result<(), String> {
        let Some(commands) = simple_commands(script) else {
            return Ok(());
        };
        // A sourced file's code is that command's own, as an
        // interpreter's script is: the rule allowing it covers what it runs.
        if commands
            .iter()
            .any(|c| matches!(c.split_whitespace().next(), Some("source" | ".")))
        {
            return Ok(());
        }
        let programs: Vec<&str> = commands
            .iter()
            .filter_map(|c| c.split_whitespace().next())
            .map(base_name)
            .collect();
        let missed: Vec<String> = ran
            .iter()
            .filter(|argv| !programs.contains(&argv[0].as_str()))
            .map(|argv| format!("ran {argv:?}"))
            .collect();
        if missed.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "{script:?}: {} (decided under backstops as {commands:?})",
                missed.join(", ")
            ))
        }
    }
}

/// A thread that runs the cases' scripts under bash, confined once when it
/// starts (writes only in the lab's folders, no network), as every process
/// it starts is then. Started from the test's own threads, each case would
/// pay a `fork` of the whole test process (its page tables, with every
/// other test's memory): most of this test's cost in the suite. From here
/// bash starts by `posix_spawn`.
struct Spawner {
    cases: Option<mpsc::Sender<(String, mpsc::Sender<()>)>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Spawner {
    fn start(writable: &Path, ws: &Path, shims: &Path, home: &Path) -> Self {
        let (writable, ws, shims, home) = (
            writable.to_path_buf(),
            ws.to_path_buf(),
            shims.to_path_buf(),
            home.to_path_buf(),
        );
        let (cases, inbox) = mpsc::channel::<(String, mpsc::Sender<()>)>();
        let (ready, confined) = mpsc::channel();
        let thread = std::thread::spawn(move || {
            let result = runner::testkit::confine_thread(&[writable]);
            let ok = result.is_ok();
            ready.send(result).unwrap();
            if !ok {
                return;
            }
            for (script, done) in inbox {
                run_bash(&script, &ws, &shims, &home);
                let _ = done.send(());
            }
        });
        confined
            .recv()
            .unwrap()
            .expect("the differential test needs Landlock to confine bash");
        Self {
            cases: Some(cases),
            thread: Some(thread),
        }
    }

    /// Runs `script` and waits for it (and its process group) to end.
    fn run(&self, script: &str) {
        let (done, wait) = mpsc::channel();
        let cases = self.cases.as_ref().unwrap();
        cases.send((script.to_string(), done)).unwrap();
        wait.recv().expect("the spawner thread ended");
    }
}

impl Drop for Spawner {
    fn drop(&mut self) {
        self.cases.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `bash -c script` in `ws` with the shims as its PATH, on the calling
/// (confined) thread; at most 3 seconds, then its process group is killed.
fn run_bash(script: &str, ws: &Path, shims: &Path, home: &Path) {
    let mut cmd = Command::new("/bin/bash");
    cmd.args(["--norc", "--noprofile", "-c", script])
        .current_dir(ws)
        .env_clear()
        .env("PATH", shims)
        .env("HOME", home)
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    let mut child = cmd.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if Instant::now() > deadline {
            // SAFETY: signalling the case's own process group.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            break;
        }
        std::thread::sleep(Duration::from_micros(300));
    }
    // Whatever the script left running in the background.
    // SAFETY: as above.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
}

/// A signature only a rule naming the exact text allows; a login shell's
/// marker (`unless_confined`) is not: the shell's command is read as `-c`.
fn opaque(s: &runner_policy::Signature) -> bool {
    s.opaque.is_some() && !s.unless_confined
}

/// How a case's run was compared with the analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compared {
    /// Every program run and file changed against the analysis.
    Fully,
    /// Opaque, a plain list: the programs run against its commands'.
    ProgramsOnly,
    /// Opaque and no plain list: only a rule naming the whole text, or a
    /// layer's default under backstops, allows it; nothing to compare.
    Not,
}

impl Compared {
    fn of(script: &str, analysis: &shell::ShellAnalysis, ws: &Path) -> Self {
        let sigs = analysis.signatures(&LexicalPaths::new(ws), ".");
        if analysis.opaque.is_none() && !sigs.iter().any(opaque) {
            Compared::Fully
        } else if simple_commands(script).is_some() {
            Compared::ProgramsOnly
        } else {
            Compared::Not
        }
    }
}

/// How many cases were compared each way.
#[derive(Debug, Default)]
pub(crate) struct Counts {
    fully: usize,
    programs_only: usize,
    not: usize,
}

impl Counts {
    fn add(&mut self, c: Compared) {
        match c {
            Compared::Fully => self.fully += 1,
            Compared::ProgramsOnly => self.programs_only += 1,
            Compared::Not => self.not += 1,
        }
    }

    fn total(&self) -> usize {
        self.fully + self.programs_only + self.not
    }
}

/// The real program behind a name, outside the shims.
fn real_program(name: &str) -> Option<PathBuf> {
    ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.exists())
}

/// Every program name on this machine's usual PATH, and the cases' own.
fn program_names() -> Vec<String> {
    let mut names: Vec<String> = EXTRA_NAMES.iter().map(|s| s.to_string()).collect();
    for d in [
        "/usr/local/sbin",
        "/usr/local/bin",
        "/usr/sbin",
        "/usr/bin",
        "/sbin",
        "/bin",
    ] {
        if let Ok(rd) = std::fs::read_dir(d) {
            names.extend(
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned()),
            );
        }
    }
    names.sort();
    names.dedup();
    names.retain(|n| !n.contains('/') && !n.is_empty());
    names
}

/// Every file (and link) under `root` with its length, mtime and inode.
fn snapshot(root: &Path) -> BTreeMap<String, (u64, SystemTime, u64)> {
    use std::os::unix::fs::MetadataExt;
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let Ok(m) = p.symlink_metadata() else {
                continue;
            };
            if m.is_dir() {
                stack.push(p);
                continue;
            }
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            out.insert(rel, (m.len(), m.modified().unwrap(), m.ino()));
        }
    }
    out
}

fn changed(
    before: &BTreeMap<String, (u64, SystemTime, u64)>,
    after: &BTreeMap<String, (u64, SystemTime, u64)>,
) -> Vec<String> {
    let mut out: Vec<String> = after
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(v))
        .map(|(k, _)| k.clone())
        .collect();
    out.extend(before.keys().filter(|k| !after.contains_key(*k)).cloned());
    out
}

/// The shims' records: argv, NUL-separated, each ended by `\1`.
fn read_log(log: &Path) -> Vec<Vec<String>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(log)
        .map(|dir| dir.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    // Oldest process first, mostly: a shim's pid names its file.
    files.sort_by_key(|f| {
        f.file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.parse::<u64>().ok())
    });
    let mut out = Vec::new();
    for file in files {
        let bytes = std::fs::read(file).unwrap_or_default();
        let mut cur = Vec::new();
        for field in bytes.split(|b| *b == 0) {
            if field == [1] {
                out.push(std::mem::take(&mut cur));
            } else if !field.is_empty() || !cur.is_empty() {
                cur.push(String::from_utf8_lossy(field).into_owned());
            }
        }
    }
    out.retain(|v: &Vec<String>| !v.is_empty());
    out
}

/// Whether the analysis's words stand for the words that ran: equal, or
/// a word only known at run time (expansions, globs, `{}`, `<(...)`)
/// standing for any run of words. Behind `xargs`, words may follow.
fn words_cover(pattern: &[String], argv: &[String], trailing: bool) -> bool {
    let wild = |w: &str| w.contains(['$', '`', '*', '?', '[', '{', '~']) || w == "<(...)";
    let (mut p, mut a) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while a < argv.len() {
        if p < pattern.len() && wild(&pattern[p]) {
            star = Some((p, a));
            p += 1;
        } else if p < pattern.len() && pattern[p] == argv[a] {
            p += 1;
            a += 1;
        } else if let Some((sp, sa)) = star {
            p = sp + 1;
            a = sa + 1;
            star = Some((sp, sa + 1));
        } else {
            return p == pattern.len() && trailing;
        }
    }
    pattern[p..].iter().all(|w| wild(w))
}

/// A small deterministic generator (xorshift), for the mutants.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A script with a few shell metacharacters inserted, deleted or
/// repeated at random places.
fn mutate(s: &str, rng: &mut Rng) -> String {
    const BITS: &[&str] = &[
        "(", ")", "$(", "`", "{", "}", "'", "\"", ";", "\n", "&", "|", "<", ">", "((", "))", " ",
        "\\", "[", "]", "!", "#", "$((", "<(", "${", "a[", "=", "$x", "*", "..",
    ];
    let mut chars: Vec<char> = s.chars().collect();
    for _ in 0..1 + rng.below(3) {
        let at = rng.below(chars.len() + 1);
        match rng.below(3) {
            0 => {
                let bit = BITS[rng.below(BITS.len())];
                chars.splice(at..at, bit.chars());
            }
            1 if at < chars.len() => {
                chars.remove(at);
            }
            _ => {
                let end = (at + 1 + rng.below(6)).min(chars.len());
                let piece: Vec<char> = chars[at.min(end)..end].to_vec();
                chars.splice(at..at, piece);
            }
        }
    }
    chars.into_iter().collect()
}

/// The `bash` rows of the attack corpora.
fn corpus_scripts() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/policy");
    let mut out = Vec::new();
    for name in ["corpus.yaml", "programs.yaml"] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let v: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
        for case in v["cases"].as_array().unwrap() {
            if let Some(b) = case["bash"].as_str() {
                out.push(b.to_string());
            }
        }
    }
    out
}

/// Every case: the corpora, each context with each payload, contexts
/// nested two deep, the data cases, and mutants of them all.
pub(crate) fn cases(mutants: usize, seed: u64) -> Vec<String> {
    let mut out = corpus_scripts();
    for c in CONTEXTS {
        for p in PAYLOADS {
            out.push(c.replace(HOLE, p));
        }
    }
    // Two deep: the structural contexts around each other.
    let structural = &CONTEXTS[..14];
    for outer in structural {
        for inner in CONTEXTS {
            out.push(outer.replace(HOLE, &inner.replace(HOLE, PAYLOADS[0])));
        }
    }
    out.extend(DATA_CASES.iter().map(|s| s.to_string()));
    out.extend(READING_CASES.iter().map(|s| s.to_string()));
    out.extend(ENDING_CASES.iter().map(|s| s.to_string()));
    out.extend(AGENT_SHELL_CASES.iter().map(|s| s.to_string()));
    let mut rng = Rng(seed | 1);
    let base = out.clone();
    for _ in 0..mutants {
        let s = &base[rng.below(base.len())];
        out.push(mutate(s, &mut rng));
    }
    out
}

/// Runs the cases on two workers; the findings, sorted, and how many
/// cases were compared each way.
pub(crate) fn compared_findings(cases: &[String]) -> (Vec<String>, Counts) {
    let names = program_names();
    let workers = 2;
    let chunks: Vec<Vec<String>> = (0..workers)
        .map(|w| cases.iter().skip(w).step_by(workers).cloned().collect())
        .collect();
    let results: Vec<(Compared, Result<(), String>)> = std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .iter()
            .map(|chunk| {
                let names = &names;
                s.spawn(move || {
                    let lab = Lab::new(names);
                    chunk.iter().map(|c| lab.case(c)).collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let mut counts = Counts::default();
    let mut found: Vec<String> = results
        .into_iter()
        .filter_map(|(compared, result)| {
            counts.add(compared);
            result.err()
        })
        .collect();
    found.sort();
    found.dedup();
    (found, counts)
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// At most this share of the cases may go uncompared.
const MAX_UNCOMPARED_PERCENT: usize = 50;

#[test]
fn the_analysis_covers_what_bash_does() {
    let mutants = env_number("RUNNER_DIFF_MUTANTS", 1_200) as usize;
    let seed = env_number("RUNNER_DIFF_SEED", 0x5eed_2026);
    let cases = cases(mutants, seed);
    assert!(cases.len() > 2_000, "{} cases", cases.len());
    let (found, counts) = compared_findings(&cases);
    // What the comparison covers, in the test's output (`--nocapture`).
    println!(
        "differential: {} cases: {} fully compared, {} on program names only, {} not compared (opaque, no plain list)",
        counts.total(),
        counts.fully,
        counts.programs_only,
        counts.not
    );
    assert_eq!(counts.total(), cases.len());
    // The bound on what goes uncompared: a change that makes more of the
    // cases opaque shows here before it hides a misreading.
    assert!(
        counts.not * 100 <= counts.total() * MAX_UNCOMPARED_PERCENT,
        "{} of {} cases were not compared (bound: {MAX_UNCOMPARED_PERCENT}%)",
        counts.not,
        counts.total()
    );
    assert!(
        found.is_empty(),
        "{} of {} cases ran what the analysis did not see:\n{}",
        found.len(),
        cases.len(),
        found
            .iter()
            .take(60)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The harness catches a misreading: checked against the analysis of
/// another script (what a wrong reading amounts to), what bash did is a
/// finding, both for a program run and for a file written.
#[test]
fn the_harness_sees_what_bash_runs() {
    let names = program_names();
    let lab = Lab::new(&names);
    // Bash is confined to the lab's folders, and only the spawner thread
    // is: this one still writes beside them.
    let root = lab.cases.parent().unwrap().to_path_buf();
    lab.spawner
        .run("echo x > ../../escaped; echo x > /tmp/escaped-$$; echo x > inside");
    assert!(lab.ws.join("inside").exists());
    assert!(!root.join("escaped").exists());
    assert!(
        std::fs::read_dir("/tmp")
            .unwrap()
            .flatten()
            .all(|e| { !e.file_name().to_string_lossy().starts_with("escaped-") })
    );
    std::fs::write(root.join("beside"), "x").unwrap();
    for script in ["( ( touch pwned ) )", "x=$((echo x > pwned) )"] {
        let (ran, changed) = lab.run(script);
        assert!(
            lab.check(script, &shell::analyze(script), &ran, &changed)
                .is_ok()
        );
        let wrong = shell::analyze("echo hi");
        let found = lab.check(script, &wrong, &ran, &changed);
        assert!(found.is_err(), "{script}: {ran:?} {changed:?}");
    }
    // Under backstops: a program the list does not begin a command with.
    let (ran, _) = lab.run("python3 -c x; rm -f y");
    assert!(Lab::check_opaque("python3 -c x; rm -f y", &ran.iter().collect::<Vec<_>>()).is_ok());
    assert!(
        Lab::check_opaque("python3 -c x", &ran.iter().collect::<Vec<_>>()).is_err(),
        "{ran:?}"
    );
    let (ran, _) = lab.run("echo a | xargs rm -f");
    assert!(ran.contains(&vec!["xargs".into(), "rm".into(), "-f".into()]));
    assert!(ran.contains(&vec!["rm".into(), "-f".into(), "a".into()]));
    // Arguments holding newlines, logged while other shims log: bash
    // writes such a record in pieces (its stdout is line-buffered), which
    // must not mix with the others' (CI once read a lone `PY` this way;
    // with one shared log file this fails about one run in four).
    let many =
        "for i in {1..30}; do pwned $'a\\nb\\nc\\nd\\ne\\nf\\ng\\nh' & cat </dev/null & done; wait";
    let (ran, _) = lab.run(many);
    assert_eq!(ran.len(), 60, "{ran:?}");
    for argv in &ran {
        assert!(
            *argv == ["cat"] || *argv == ["pwned", "a\nb\nc\nd\ne\nf\ng\nh"],
            "{argv:?}"
        );
    }
    assert!(!words_cover(&["a".into()], &["b".into()], false));
    assert!(words_cover(
        &["$X".into()],
        &["a".into(), "b".into()],
        false
    ));
    assert!(words_cover(&[], &["a".into()], true));
}
