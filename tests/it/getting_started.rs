//! The getting-started chapter runs as written (issue 74): every `sh`
//! block, in order, by bash, in a fresh `git init` folder, with the
//! runner under test on `PATH`, a home of its own, and an OpenAI-compatible
//! fake on 127.0.0.1 behind `OPENAI_BASE_URL`. The install line runs
//! against a stand-in `cargo` that accepts that line and no other.

use std::path::Path;
use std::process::Command;

use crate::common::fake_llm::{FakeServer, Reply};
use crate::common::wire::Vendor;
use crate::common::{read_json, repo, write};

/// The chapter's `sh` blocks, with the line each starts on.
fn sh_blocks(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut block: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        match &mut block {
            None if line == "```sh" => block = Some((i + 2, String::new())),
            Some(_) if line == "```" => out.extend(block.take()),
            Some((_, body)) => {
                body.push_str(line);
                body.push('\n');
            }
            None => {}
        }
    }
    out
}

#[test]
fn every_command_block_of_getting_started_runs() {
    let text = std::fs::read_to_string(repo().join("docs/src/getting-started.md")).unwrap();
    let blocks = sh_blocks(&text);
    assert!(blocks.len() >= 5, "{} blocks", blocks.len());

    let dir = tempfile::tempdir().unwrap();
    let (home, work, bin) = (
        dir.path().join("home"),
        dir.path().join("repo"),
        dir.path().join("bin"),
    );
    for d in [&home, &work, &bin] {
        std::fs::create_dir_all(d).unwrap();
    }
    crate::common::git(&work, &["init", "-q"]);
    write(&work, "README.md", "# A repository\n");
    // cargo, as far as the install line goes: that line exactly.
    let cargo = write(
        &bin,
        "cargo",
        "#!/bin/sh\n[ \"$*\" = 'install --locked --git https://github.com/OWNER/runner runner' ] || { echo \"not the install line: cargo $*\" >&2; exit 1; }\n",
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    let server = FakeServer::start(|_, _| {
        Reply::json(
            200,
            &serde_json::json!({"choices": [{"message": {"role": "assistant",
                "content": "README.md: what the repository is."}, "finish_reason": "stop"}]}),
        )
    });
    let runner_dir = Path::new(env!("CARGO_BIN_EXE_runner")).parent().unwrap();
    let vendor = Vendor::OpenAi;

    let mut stdout = String::new();
    for (line, block) in &blocks {
        let o = Command::new("bash")
            .args(["--noprofile", "--norc", "-euo", "pipefail", "-c", block])
            .current_dir(&work)
            .env_clear()
            .env("HOME", &home)
            .env(
                "PATH",
                format!(
                    "{}:{}:/usr/local/bin:/usr/bin:/bin",
                    bin.display(),
                    runner_dir.display()
                ),
            )
            .env("CI", "true")
            .env(vendor.url_var(), vendor.base_url(&server.url()))
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "getting-started.md:{line}: the block failed:\n{block}\n{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        stdout.push_str(&String::from_utf8_lossy(&o.stdout));
    }

    // What the chapter says happened, happened.
    assert!(stdout.contains("runner 0.1.0"), "{stdout}");
    assert!(stdout.contains("passed example"), "{stdout}");
    assert!(stdout.contains("+++ b/docs/agent-notes.md"), "{stdout}");
    assert!(
        work.join("docs/agent-notes.md").is_file(),
        "--apply kept it"
    );
    assert!(
        stdout.contains("README.md: what the repository is."),
        "{stdout}"
    );
    let exec = read_json(work.join("runner-out/exec/transcript.json"));
    assert_eq!(exec["outcome"]["status"], "passed");
    assert!(stdout.contains("\"decision\":\"deny\"") && stdout.contains("denied\n"));
    assert!(stdout.contains("\"decision\":\"allow\""), "{stdout}");
    assert!(
        home.join(".local/share/bash-completion/completions/runner")
            .is_file()
    );
    for page in ["runner.1", "runner-run.1", "runner-exec.1"] {
        assert!(
            home.join(".local/share/man/man1").join(page).is_file(),
            "{page}"
        );
    }
}
