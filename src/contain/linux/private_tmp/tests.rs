//! The private `/tmp`: what a command sees, and the runner's view of it.

use super::*;

#[test]
fn a_commands_path_is_the_private_folders_unless_bound_back() {
    let view = TmpView {
        roots: vec![(PathBuf::from("/tmp"), PathBuf::from("/tmp/runner-p/tmp"))],
        kept: vec![
            (
                PathBuf::from("/tmp/runner-ws"),
                PathBuf::from("/tmp/runner-ws"),
            ),
            (PathBuf::from("/tmp/t"), PathBuf::from("/tmp/t")),
            (PathBuf::from("/tmp/t/ws"), PathBuf::from("/tmp/p/mask-0")),
            (
                PathBuf::from("/tmp/t/ws/.git/objects"),
                PathBuf::from("/tmp/t/ws/.git/objects"),
            ),
        ],
    };
    let p = |s: &str| view.runner_path(Path::new(s));
    assert_eq!(p("/tmp/fix.py"), PathBuf::from("/tmp/runner-p/tmp/fix.py"));
    assert_eq!(p("/tmp/runner-ws/a"), PathBuf::from("/tmp/runner-ws/a"));
    assert_eq!(p("/tmp"), PathBuf::from("/tmp/runner-p/tmp"));
    assert_eq!(p("/usr/bin/git"), PathBuf::from("/usr/bin/git"));
    // A masked tree is its empty folder, but for what is bound back
    // inside it.
    assert_eq!(p("/tmp/t/flag"), PathBuf::from("/tmp/t/flag"));
    assert_eq!(p("/tmp/t/ws/.env"), PathBuf::from("/tmp/p/mask-0/.env"));
    assert_eq!(
        p("/tmp/t/ws/.git/objects/ab"),
        PathBuf::from("/tmp/t/ws/.git/objects/ab")
    );
    // A sibling whose name starts alike is not beneath the kept one.
    assert_eq!(
        p("/tmp/runner-ws2/a"),
        PathBuf::from("/tmp/runner-p/tmp/runner-ws2/a")
    );
}

/// A runner started from `/tmp` itself keeps its folder, but the folder
/// made private is never bound back whole (that would be the
/// machine's `/tmp` again).
#[test]
fn the_private_folder_itself_is_never_kept() {
    let base = tempfile::tempdir().unwrap();
    let t = PrivateTmp::prepare(
        Mode::Root,
        base.path(),
        &[Keep {
            path: PathBuf::from("/tmp"),
            access: Access::Read,
        }],
    )
    .unwrap();
    assert!(t.view.kept.is_empty(), "{:?}", t.view.kept);
    assert_eq!(
        t.view.runner_path(Path::new("/tmp/x")),
        base.path().join("tmp/x")
    );
}

/// Where the machine allows it, a command writes `/tmp/x` into the
/// task's folder, reads a folder bound back read-only, and cannot
/// write it; a tree masked in it is empty but for what is bound back
/// inside.
#[test]
fn a_command_writes_its_own_tmp_and_not_the_machines() {
    let Ok(mode) = available() else {
        eprintln!("no private /tmp here: {}", available().unwrap_err());
        return;
    };
    let base = tempfile::tempdir().unwrap();
    let kept = tempfile::tempdir().unwrap();
    std::fs::write(kept.path().join("seen"), "kept\n").unwrap();
    std::fs::create_dir_all(kept.path().join("hidden/objects")).unwrap();
    std::fs::write(kept.path().join("hidden/.env"), "SECRET\n").unwrap();
    std::fs::write(kept.path().join("hidden/objects/o"), "object\n").unwrap();
    let name = format!("runner-private-{}", std::process::id());
    let t = PrivateTmp::prepare(
        mode,
        base.path(),
        &[
            Keep {
                path: kept.path().to_path_buf(),
                access: Access::Read,
            },
            Keep {
                path: kept.path().join("hidden"),
                access: Access::Masked,
            },
            Keep {
                path: kept.path().join("hidden/objects"),
                access: Access::Read,
            },
        ],
    )
    .unwrap();
    use std::os::unix::process::CommandExt;
    let script = format!(
        "echo hi > /tmp/{name} && cat /tmp/{name} && cat {k}/seen && cat {k}/hidden/objects/o && (cat {k}/hidden/.env 2>/dev/null || echo masked) && (echo no > {k}/new) 2>/dev/null || echo refused",
        k = kept.path().display()
    );
    let mut cmd = std::process::Command::new("sh");
    cmd.args(["-c", &script]);
    // SAFETY: `enter` makes only system calls.
    unsafe {
        cmd.pre_exec(move || t.enter());
    }
    let out = cmd.output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "hi\nkept\nobject\nmasked\nrefused\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!Path::new("/tmp").join(&name).exists());
    assert!(base.path().join("tmp").join(&name).exists());
    assert!(!kept.path().join("new").exists());
}
