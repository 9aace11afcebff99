//! Copy-on-write workspaces (issue 77): the same task on a generated
//! 20,000-file repository, its workspace an overlay and a copy, leaves the
//! same diff; a read-denied file is absent in both; an edit, a deletion
//! (of a file, of a folder, of a folder made again), a folder renamed, a
//! new file and a symlink change are in the diff, which applies; `git status` and `git
//! diff` in the view agree with it; build output an ignore rule matches
//! is no change.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::common::{bash_turns, git, is_root, printed, read_json, runner, stderr, write};

/// How many files the generated repository holds (besides a few named).
const FILES: usize = 20_000;

/// The generated repository, made once for the file's tests.
fn big_repo() -> &'static Path {
    static REPO: OnceLock<tempfile::TempDir> = OnceLock::new();
    REPO.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("mono");
        for i in 0..FILES {
            let d = root.join(format!("files/d{}", i / 200));
            if i % 200 == 0 {
                std::fs::create_dir_all(&d).unwrap();
            }
            std::fs::write(d.join(format!("f{i}.txt")), format!("file {i}\n")).unwrap();
        }
        write(&root, ".gitignore", "build/\n*.log\n");
        write(&root, "src/main.txt", "one\ntwo\n");
        write(&root, "old.txt", "old\n");
        write(&root, "flip.txt", "a file that becomes a folder\n");
        write(&root, "secret/token.txt", "s3cr3t\n");
        write(&root, "build/keep.txt", "tracked though ignored\n");
        write(&root, "build/out.bin", "ignored\n");
        write(&root, "notes.log", "ignored\n");
        std::os::unix::fs::symlink("files/d0/f0.txt", root.join("link")).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        git(&root, &["add", "-A"]);
        git(&root, &["add", "-f", "build/keep.txt"]);
        git(&root, &["commit", "-qm", "generated"]);
        dir
    })
    .path()
}

/// The task's view of the repository, then its changes, then git's.
const COMMANDS: &[&str] = &[
    "test ! -e secret/token.txt && echo absent; ls build; ls notes.log 2>&1 | head -1",
    "printf 'uno\\ntwo\\n' > src/main.txt && rm old.txt && ln -sfn files/d1/f200.txt link && echo new > added.txt && rm -rf files/d5 && rm -rf files/d6 && mkdir files/d6 && echo n > files/d6/again.txt && mkdir -p build && echo x > build/made.bin && mv files/d7 files/d7moved && rm -rf files/d8 && echo x > files/d8 && rm flip.txt && mkdir flip.txt && echo y > flip.txt/inner",
    "git status --porcelain",
    "git diff --name-status",
];

/// Runs the task with `--workspace-mode MODE`; its transcript and diff.
fn run_in(mode: &str) -> (serde_json::Value, String) {
    let out = tempfile::tempdir().unwrap();
    let repo = big_repo().join("mono");
    let task = write(
        out.path(),
        "t.yaml",
        &format!(
            "name: t\nprompt: x\nworkspace: {}\npolicy:\n  default: allow\n  rules:\n    - deny: ['Read(./secret/**)']\nscript:\n{}  - text: done\n",
            repo.display(),
            bash_turns(COMMANDS)
        ),
    );
    let o = runner()
        .args(["run", "-q", "--workspace-mode", mode, "--out"])
        .arg(out.path().join("out"))
        .arg(&task)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let dir = out.path().join("out/t");
    let diff = std::fs::read_to_string(dir.join("changes.diff")).unwrap();
    (read_json(dir.join("transcript.json")), diff)
}

/// The transcript's changes as `KIND PATH` lines.
fn changes(t: &serde_json::Value) -> Vec<String> {
    (t["changes"].as_array().unwrap().iter())
        .map(|c| {
            format!(
                "{} {}",
                c["change"].as_str().unwrap(),
                c["path"].as_str().unwrap()
            )
        })
        .collect()
}

fn check_mode(mode: &str) -> (Vec<String>, String) {
    let (t, diff) = run_in(mode);
    assert_eq!(t["workspace_copy"]["mode"], mode, "{}", t["workspace_copy"]);
    assert!(t["workspace_copy"]["files"].as_u64().unwrap() > FILES as u64);
    // The read-denied file is absent; ignored files are too, but for the
    // tracked one.
    let seen = printed(&t, 0);
    assert!(seen.starts_with("absent\nkeep.txt\n"), "{seen}");
    assert!(seen.contains("No such file"), "{seen}");
    let changes = changes(&t);
    let deleted =
        |d: usize| (d * 200..(d + 1) * 200).map(move |i| format!("deleted files/d{d}/f{i}.txt"));
    let mut want: Vec<String> = vec![
        "added added.txt".into(),
        "added files/d6/again.txt".into(),
        "modified link".into(),
        "deleted old.txt".into(),
        "modified src/main.txt".into(),
    ];
    want.extend(
        deleted(5)
            .chain(deleted(6))
            .chain(deleted(7))
            .chain(deleted(8)),
    );
    // A folder that became a file, a file that became a folder.
    want.extend([
        "added files/d8".to_string(),
        "deleted flip.txt".to_string(),
        "added flip.txt/inner".to_string(),
    ]);
    // A folder renamed (an overlay copies it up whole: no redirects).
    want.extend((1400..1600).map(|i| format!("added files/d7moved/f{i}.txt")));
    let (mut got_sorted, mut want_sorted) = (changes.clone(), want);
    got_sorted.sort();
    want_sorted.sort();
    assert_eq!(got_sorted, want_sorted);
    // git in the view sees what the diff holds.
    let status = printed(&t, 2);
    for line in [
        " M src/main.txt",
        " D old.txt",
        " M link",
        "?? added.txt",
        "?? files/d6/again.txt",
        " D files/d5/f1000.txt",
    ] {
        assert!(status.lines().any(|l| l == line), "{line} not in\n{status}");
    }
    let named: Vec<String> = (printed(&t, 3).lines())
        .map(|l| {
            let (k, p) = l.split_once('\t').unwrap();
            format!("{} {p}", if k == "D" { "deleted" } else { "modified" })
        })
        .collect();
    let tracked: Vec<&String> = changes.iter().filter(|c| !c.starts_with("added")).collect();
    assert_eq!(
        named.iter().collect::<Vec<_>>().len(),
        tracked.len(),
        "{named:?}"
    );
    for n in &named {
        assert!(changes.contains(n), "git diff has {n}, the diff does not");
    }
    // The diff applies to the original.
    let patch = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(patch.path(), &diff).unwrap();
    git(
        &big_repo().join("mono"),
        &["apply", "--check", &patch.path().display().to_string()],
    );
    (changes, diff)
}

#[test]
fn an_overlay_and_a_copy_of_a_20000_file_repository_leave_the_same_diff() {
    if !is_root() {
        eprintln!("skipped: overlays need root");
        return;
    }
    let doctor = runner()
        .args(["doctor", "--format", "json"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let said = report["workspace_copy"].as_str().unwrap();
    assert!(said.starts_with("overlay"), "{said}");
    let overlay = check_mode("overlay");
    let copy = check_mode("copy");
    assert_eq!(overlay.0, copy.0);
    assert_eq!(overlay.1, copy.1);
    // Nothing of the view is left mounted or in the temp folder's copies.
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains("runner-ws-"), "{mounts}");
}

#[test]
fn a_runner_that_cannot_mount_copies_and_says_why_and_a_forced_overlay_fails() {
    // Not root: `auto` copies and says why; `overlay` fails the task.
    let Some(nobody) = as_nobody() else {
        eprintln!("skipped: no setpriv, or not root to switch users");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::set_permissions(d, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    write(d, "ws/a.txt", "a\n");
    write(
        d,
        "t.yaml",
        "name: t\nprompt: x\nworkspace: ws\npolicy:\n  default: allow\nscript:\n  - tool_calls:\n      - {name: bash, args: {command: 'echo b > a.txt'}}\n  - text: done\n",
    );
    chmod_all(d);
    let doctor = nobody(d, &["doctor", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let said = report["workspace_copy"].as_str().unwrap();
    assert!(said.starts_with("copy: the runner is not root"), "{said}");
    let auto = nobody(d, &["run", "-q", "--out", "out-auto", "t.yaml"]);
    assert_eq!(auto.status.code(), Some(0), "{}", stderr(&auto));
    let t = read_json(d.join("out-auto/t/transcript.json"));
    assert_eq!(t["workspace_copy"]["mode"], "copy");
    assert!(
        t["workspace_copy"]["why"]
            .as_str()
            .unwrap()
            .contains("not root"),
        "{}",
        t["workspace_copy"]
    );
    assert_eq!(t["changes"][0]["path"], "a.txt");
    let forced = nobody(
        d,
        &[
            "run",
            "-q",
            "--workspace-mode",
            "overlay",
            "--out",
            "out-forced",
            "t.yaml",
        ],
    );
    assert_eq!(forced.status.code(), Some(1), "{}", stderr(&forced));
    let t = read_json(d.join("out-forced/t/transcript.json"));
    assert!(
        t["outcome"]["reason"]
            .as_str()
            .unwrap()
            .contains("no overlay workspace"),
        "{}",
        t["outcome"]
    );
}

/// The runner binary run as `nobody` (a copy where nobody may run it).
#[allow(clippy::type_complexity)]
fn as_nobody() -> Option<Box<dyn Fn(&Path, &[&str]) -> std::process::Output>> {
    if !is_root() || which("setpriv").is_none() {
        return None;
    }
    let bin = assert_cmd::cargo::cargo_bin("runner");
    let dir = tempfile::Builder::new()
        .prefix("overlay-bin-")
        .tempdir()
        .unwrap()
        .keep();
    let copy = dir.join("runner");
    std::fs::copy(&bin, &copy).unwrap();
    chmod_all(&dir);
    Some(Box::new(move |cwd: &Path, args: &[&str]| {
        std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg("env")
            .arg(format!("HOME={}", cwd.display()))
            .arg("PATH=/usr/local/bin:/usr/bin:/bin")
            .arg(&copy)
            .args(args)
            .current_dir(cwd)
            .output()
            .unwrap()
    }))
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Everyone may read, write and enter everything beneath `dir`.
fn chmod_all(dir: &Path) {
    let st = std::process::Command::new("chmod")
        .args(["-R", "a+rwX"])
        .arg(dir)
        .status()
        .unwrap();
    assert!(st.success());
}

/// A temp folder whose path overlay's options cannot hold (a `,`): `auto`
/// copies and says why; `overlay` fails the task, and nothing is left
/// mounted or half made.
#[test]
fn where_no_overlay_can_be_mounted_auto_copies_and_overlay_fails() {
    if !is_root() {
        eprintln!("skipped: overlays need root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tmp = d.join("temp,folder");
    std::fs::create_dir(&tmp).unwrap();
    write(d, "ws/a.txt", "a\n");
    write(
        d,
        "t.yaml",
        "name: t\nprompt: x\nworkspace: ws\npolicy:\n  default: allow\nscript:\n  - tool_calls:\n      - {name: bash, args: {command: 'echo b > a.txt'}}\n  - text: done\n",
    );
    let run = |mode: &str, out: &str| {
        runner()
            .current_dir(d)
            .env("TMPDIR", &tmp)
            .args([
                "run",
                "-q",
                "--workspace-mode",
                mode,
                "--out",
                out,
                "t.yaml",
            ])
            .output()
            .unwrap()
    };
    let auto = run("auto", "out-auto");
    assert_eq!(auto.status.code(), Some(0), "{}", stderr(&auto));
    let t = read_json(d.join("out-auto/t/transcript.json"));
    assert_eq!(t["workspace_copy"]["mode"], "copy");
    let why = t["workspace_copy"]["why"].as_str().unwrap();
    assert!(
        why.contains("no overlay could be mounted") && why.contains(','),
        "{why}"
    );
    assert_eq!(t["changes"][0]["path"], "a.txt");
    let forced = run("overlay", "out-forced");
    assert_eq!(forced.status.code(), Some(1), "{}", stderr(&forced));
    let t = read_json(d.join("out-forced/t/transcript.json"));
    let reason = t["outcome"]["reason"].as_str().unwrap();
    assert!(reason.contains("no overlay workspace"), "{reason}");
    // Nothing of either run is left in the temp folder.
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A view at a repository's top shows the original's git index (it is
/// not copied); git's writes, and a command writing the file in place,
/// land in the view: the original's index, HEAD and refs never change.
#[test]
fn an_overlay_views_git_never_writes_the_originals_index() {
    if !is_root() {
        eprintln!("skipped: overlays need root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    write(&root, "a.txt", "a\n");
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "first"]);
    let index = std::fs::read(root.join(".git/index")).unwrap();
    let head = git(&root, &["rev-parse", "HEAD"]);
    let task = write(
        dir.path(),
        "t.yaml",
        &format!(
            "name: t\nprompt: x\nworkspace: {}\npolicy:\n  default: allow\n  rules:\n    - allow: ['Edit(./.git/**)']\nscript:\n{}  - text: done\n",
            root.display(),
            bash_turns(&[
                "git status --porcelain && echo clean",
                "echo b >> a.txt && git add -A && git -c user.name=a -c user.email=a@b commit -qm agent && git log --oneline | wc -l",
                "printf 'XXXX' | dd of=.git/index bs=1 count=4 conv=notrunc 2>/dev/null && echo wrote && ls .git | sort | tr '\\n' ' '",
            ])
        ),
    );
    let o = runner()
        .args(["run", "-q", "--workspace-mode", "overlay", "--out"])
        .arg(dir.path().join("out"))
        .arg(&task)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = read_json(dir.path().join("out/t/transcript.json"));
    assert_eq!(printed(&t, 0), "clean\n");
    assert_eq!(printed(&t, 1).trim(), "2");
    // The view's own git folder: none of the original's hooks or logs.
    let listed = printed(&t, 2);
    assert!(listed.starts_with("wrote\n"), "{listed}");
    assert!(
        !listed.contains("hooks") && listed.contains("index"),
        "{listed}"
    );
    assert_eq!(std::fs::read(root.join(".git/index")).unwrap(), index);
    assert_eq!(git(&root, &["rev-parse", "HEAD"]), head);
    assert_eq!(git(&root, &["status", "--porcelain"]), "");
}

/// An isolated child agent's copy is made from its parent's view: the
/// kernel stacks overlays two deep at most, so the deepest is a copy, the
/// child's work comes back, and the run's later tasks keep their
/// overlays (even under `--workspace-mode overlay`).
#[test]
fn an_isolated_child_in_a_view_works_and_later_tasks_keep_their_overlays() {
    if !is_root() {
        eprintln!("skipped: overlays need root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/a.txt", "a\n");
    write(
        d,
        "a.yaml",
        "name: a\nprompt: p\nworkspace: ws\npolicy: {default: allow}\nagents:\n  adder:\n    model: scripted\n    isolation: copy\n    script:\n      - tool_calls:\n          - {name: write_file, args: {file_path: b.txt, content: \"new\\n\"}}\n      - text: added b\nscript:\n  - tool_calls:\n      - {name: task, args: {agent: adder, prompt: add}}\n  - text: done\n",
    );
    write(
        d,
        "b.yaml",
        "name: b\nprompt: p\nworkspace: ws\npolicy: {default: allow}\nscript:\n  - text: done\n",
    );
    let o = runner()
        .current_dir(d)
        .args([
            "run",
            "-q",
            "--workspace-mode",
            "overlay",
            "--out",
            "out",
            "a.yaml",
            "b.yaml",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("WARN"), "{}", stderr(&o));
    let a = read_json(d.join("out/a/transcript.json"));
    assert_eq!(a["changes"][0]["path"], "b.txt", "{}", a["changes"]);
    let b = read_json(d.join("out/b/transcript.json"));
    assert_eq!(
        b["workspace_copy"]["mode"], "overlay",
        "{}",
        b["workspace_copy"]
    );
}
