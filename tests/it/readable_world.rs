//! One readable world, as the wall holds it (issue 73, item 5): outside
//! the task's folders, commands read the system and toolchain trees, but
//! not the home folder (but for its toolchains), other homes, the
//! machine's secrets or other processes' `/proc` files, whoever reads:
//! inline code the gate lets run under the backstops too. A task widens
//! it (`readable:`) and narrows it (`unreadable:`).

use std::path::Path;

use crate::common::{bash_turns, git, runner, stderr, write};

/// Under Landlock alone (the machine's /tmp, where the test's folder is)
/// and with a private /tmp (where the trees Landlock keeps from commands
/// are masked inside the folders bound back).
#[test]
fn inline_code_reads_the_world_and_nothing_of_the_homes_or_secrets() {
    for private_tmp in [false, true] {
        reads_under(private_tmp);
    }
}

fn reads_under(private_tmp: bool) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/README.md", "readme\n");
    write(d, "ws/.env", "TOKEN=x\n");
    git(&d.join("ws"), &["init", "-q"]);
    git(&d.join("ws"), &["add", "README.md"]);
    git(&d.join("ws"), &["commit", "-qm", "init"]);
    write(d, "home/.ssh/id_rsa", "PRIVATE-KEY-4711\n");
    write(d, "home/.cargo/bin/tool", "TOOLCHAIN-OK\n");
    write(d, "home/.config/tool/settings", "WIDENED-OK\n");
    write(d, "data/private.txt", "NARROWED-4711\n");
    write(d, "data/open.txt", "OPEN-OK\n");
    let home = d.join("home");
    let read = |p: &Path| {
        format!(
            "python3 -c \"import sys\ntry:\n    print(open(sys.argv[1]).read().strip())\nexcept OSError as e:\n    print('refused', type(e).__name__)\" {}",
            p.display()
        )
    };
    let paths = [
        home.join(".ssh/id_rsa"),
        home.join(".cargo/bin/tool"),
        home.join(".config/tool/settings"),
        d.join("data/private.txt"),
        d.join("data/open.txt"),
        Path::new("/proc/1/environ").to_path_buf(),
        Path::new("/etc/os-release").to_path_buf(),
    ];
    let commands: Vec<String> = paths.iter().map(|p| read(p)).collect();
    let task = write(
        d,
        "t.yaml",
        &format!(
            "prompt: p\nworkspace: ws\nsandbox: {{private_tmp: {private_tmp}, readable: [\"~/.config/tool\"], unreadable: [data/private.txt]}}\npolicy:\n  default: allow\n  rules:\n    - deny: [\"Read(./.env)\", \"Bash(git push:*)\"]\nscript:\n{}  - text: done\n",
            bash_turns(&commands.iter().map(String::as_str).collect::<Vec<_>>())
        ),
    );
    let o = runner()
        .current_dir(d)
        .env("HOME", &home)
        .args(["run", "-q", "--out", "out"])
        .arg(&task)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let t = crate::common::read_json(d.join("out/t/transcript.json"));
    if !t["sandbox"]
        .as_str()
        .unwrap_or_default()
        .starts_with("landlock")
    {
        eprintln!("no Landlock here: {}", t["sandbox"]);
        return;
    }
    let calls = t["tool_calls"].as_array().unwrap();
    let said: Vec<String> = calls
        .iter()
        .map(|c| {
            assert_eq!(c["decision"]["decision"], "allow", "{c}");
            c["content"].as_str().unwrap_or_default().to_string()
        })
        .collect();
    let expect = [
        "refused ",
        "TOOLCHAIN-OK",
        "WIDENED-OK",
        "refused ",
        "OPEN-OK",
        "refused PermissionError",
        "NAME=",
    ];
    for ((p, got), want) in paths.iter().zip(&said).zip(expect) {
        assert!(
            got.contains(want),
            "{} (private /tmp {private_tmp}): wanted {want:?}, got {got}",
            p.display()
        );
        // Landlock refuses (EACCES); a mask has nothing there (ENOENT).
        if want == "refused " && !private_tmp {
            assert!(got.contains("PermissionError"), "{got}");
        }
    }
    let text = std::fs::read_to_string(d.join("out/t/transcript.json")).unwrap();
    assert!(!text.contains("PRIVATE-KEY-4711") && !text.contains("NARROWED-4711"));
    assert!(
        t["sandbox"].as_str().unwrap().contains("unreadable:"),
        "{}",
        t["sandbox"]
    );
}
