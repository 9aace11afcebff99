//! The README's and the book's recipes work as written (issues 50, 47):
//! every YAML block is checked as what it is, and every command of the
//! command table exists with the options it lists.
//!
//! - A task (it has `prompt:`) validates and, being scripted, runs offline
//!   beside the shipped policies and example workspace, and passes.
//! - A policy (`default:` or `rules:` at the top) validates.
//! - A section of a task (`hooks:`, `mcp_servers:`, `agents:` ...)
//!   validates inside a minimal task.
//! - A workflow (`jobs:`) passes actionlint.

use std::path::Path;
use std::process::Command;

use crate::common::{copy_tree, repo, runner, stderr};

/// The README and the book's hand-written pages (the generated reference
/// aside), one after the other.
fn readme() -> String {
    let mut text = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let mut pages: Vec<_> = std::fs::read_dir(repo().join("docs/src"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    pages.sort();
    for p in pages {
        text.push('\n');
        text.push_str(&std::fs::read_to_string(p).unwrap());
    }
    text
}

/// The fenced blocks of `lang`, with the line each starts on.
fn blocks(text: &str, lang: &str) -> Vec<(usize, String)> {
    let fence = format!("```{lang}\n");
    let mut out = Vec::new();
    let mut rest = text;
    let mut line = 1;
    while let Some(i) = rest.find(&fence) {
        line += rest[..i].matches('\n').count() + 1;
        let body_start = i + fence.len();
        let end = rest[body_start..].find("```").unwrap() + body_start;
        out.push((line, rest[body_start..end].to_string()));
        line += rest[i + fence.len() - 1..end].matches('\n').count();
        rest = &rest[end..];
    }
    out
}

fn top_level(block: &str, key: &str) -> bool {
    block.lines().any(|l| l.starts_with(&format!("{key}:")))
}

/// A folder laid out as the repository is (tasks/, policies/, examples/),
/// where a block saved as `tasks/NAME.yaml` finds what it names.
fn layout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for d in ["policies", "examples"] {
        copy_tree(&repo().join(d), &dir.path().join(d));
    }
    std::fs::create_dir(dir.path().join("tasks")).unwrap();
    dir
}

fn validate(root: &Path, file: &Path) -> Result<(), String> {
    let o = runner()
        .current_dir(root)
        .arg("validate")
        .arg(file)
        .output()
        .unwrap();
    if o.status.success() {
        Ok(())
    } else {
        Err(stderr(&o))
    }
}

#[test]
fn every_yaml_block_of_the_readme_is_what_it_says() {
    let text = readme();
    let all = blocks(&text, "yaml");
    assert!(all.len() >= 10, "{} blocks", all.len());
    let dir = layout();
    let root = dir.path();
    let mut wrong = Vec::new();
    let (mut tasks, mut policies, mut sections, mut workflows) = (0, 0, 0, 0);
    for (line, block) in &all {
        let file = root.join(format!("tasks/readme-{line}.yaml"));
        if top_level(block, "prompt") {
            tasks += 1;
            std::fs::write(&file, block).unwrap();
            if let Err(e) = validate(root, &file) {
                wrong.push(format!("README.md:{line}: task: {e}"));
                continue;
            }
            let mut run = runner();
            run.current_dir(root)
                .args(["run", "-q", "--out"])
                .arg(root.join(format!("out-{line}")));
            if top_level(block, "parameters") {
                // The README's own command line for it.
                run.args(["--param", "new=load_config"]);
            }
            let o = run.arg(&file).output().unwrap();
            if !o.status.success() {
                wrong.push(format!(
                    "README.md:{line}: the task did not pass: {}",
                    stderr(&o)
                ));
            }
        } else if top_level(block, "default") || top_level(block, "rules") {
            policies += 1;
            std::fs::write(&file, block).unwrap();
            if let Err(e) = validate(root, &file) {
                wrong.push(format!("README.md:{line}: policy: {e}"));
            }
        } else if top_level(block, "jobs") {
            workflows += 1;
            let wf = root.join(format!("wf-{line}.yml"));
            std::fs::write(&wf, format!("on: push\n{block}")).unwrap();
            let o = Command::new("actionlint")
                .arg("-no-color")
                .arg(&wf)
                .output()
                .expect("actionlint (scripts/install-test-deps installs it)");
            if !o.status.success() {
                wrong.push(format!(
                    "README.md:{line}: workflow: {}",
                    String::from_utf8_lossy(&o.stdout)
                ));
            }
        } else if top_level(block, "repos") {
            // A pre-commit configuration: its hooks must be ours.
            let hooks = std::fs::read_to_string(repo().join(".pre-commit-hooks.yaml")).unwrap();
            for id in block
                .lines()
                .filter_map(|l| l.trim().strip_prefix("- id: "))
            {
                let id = id.split_whitespace().next().unwrap();
                if !hooks.contains(&format!("id: {id}")) {
                    wrong.push(format!("README.md:{line}: no hook `{id}`"));
                }
            }
        } else {
            // A section of a task: inside a minimal one.
            sections += 1;
            let task = format!("prompt: x\nscript:\n  - text: done\n{block}");
            std::fs::write(&file, task).unwrap();
            if let Err(e) = validate(root, &file) {
                wrong.push(format!("README.md:{line}: section: {e}"));
            }
        }
    }
    assert!(
        tasks >= 2 && policies >= 1 && sections >= 5 && workflows >= 1,
        "{tasks} tasks, {policies} policies, {sections} sections, {workflows} workflows"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Each row of the command table: the command exists (`--help` exits 0),
/// has each `--option` the row lists, and exits 2 on bad input where the
/// row says so.
#[test]
fn the_command_table_names_what_exists() {
    let text = readme();
    let table = &text[text
        .find("| command | what it does | exit codes |")
        .unwrap()..];
    let rows: Vec<&str> = table
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert!(rows.len() >= 14, "{} rows", rows.len());
    let mut wrong = Vec::new();
    for row in rows {
        let usage = row.split('`').nth(1).unwrap();
        let words: Vec<&str> = usage.split_whitespace().collect();
        assert_eq!(words[0], "runner", "{row}");
        // The subcommand: the words before the first option or operand.
        let sub: Vec<&str> = words[1..]
            .iter()
            .take_while(|w| w.chars().all(|c| c.is_ascii_lowercase()))
            .copied()
            .collect();
        let help = if sub.is_empty() {
            runner().arg("--help").output().unwrap()
        } else {
            runner().args(&sub).arg("--help").output().unwrap()
        };
        if !help.status.success() {
            wrong.push(format!("{usage}: `runner {} --help` failed", sub.join(" ")));
            continue;
        }
        // Bad input is exit 2 wherever the row says so.
        let codes = row.rsplit('|').nth(1).unwrap_or("");
        if codes.contains('2') && !sub.is_empty() {
            let bad = runner()
                .args(&sub)
                .arg("--no-such-option")
                .output()
                .unwrap();
            if bad.status.code() != Some(2) {
                wrong.push(format!(
                    "{usage}: bad input exits {:?}, not 2",
                    bad.status.code()
                ));
            }
        }
        let shown = String::from_utf8_lossy(&help.stdout);
        for w in &words {
            let option: String = w
                .trim_start_matches(['[', '('])
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            if option.starts_with("--") && option.len() > 2 && !shown.contains(&option) {
                wrong.push(format!("{usage}: `{option}` is not an option of it"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `runner completions` and `runner man` come from the CLI's own
/// definitions (issue 47): bash loads the script (`complete -p runner`),
/// zsh and fish theirs where installed, and `man -l -` renders the page.
#[test]
fn completions_load_and_the_manual_renders() {
    let dir = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = runner().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}: {}", stderr(&out));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("runner"),
            "{shell}"
        );
        std::fs::write(dir.path().join(shell), &out.stdout).unwrap();
    }
    let script = |s: &str| dir.path().join(s).display().to_string();
    let loaded = std::process::Command::new("bash")
        .args(["--norc", "--noprofile", "-c"])
        .arg(format!("source {} && complete -p runner", script("bash")))
        .output()
        .unwrap();
    assert!(loaded.status.success(), "{}", stderr(&loaded));
    assert!(
        String::from_utf8_lossy(&loaded.stdout).contains("-F _runner runner"),
        "{}",
        String::from_utf8_lossy(&loaded.stdout)
    );
    let have = |p: &str| {
        std::process::Command::new("sh")
            .args(["-c", &format!("command -v {p}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    for (shell, check) in [
        (
            "zsh",
            format!(
                "autoload -U compinit && compinit -u && source {} && whence -w _runner",
                script("zsh")
            ),
        ),
        (
            "fish",
            format!("source {}; and complete -C 'runner comp'", script("fish")),
        ),
    ] {
        if !have(shell) {
            eprintln!("{shell} is not installed here: its script is only generated");
            continue;
        }
        let o = std::process::Command::new(shell)
            .args(["-c", &check])
            .output()
            .unwrap();
        assert!(o.status.success(), "{shell}: {}", stderr(&o));
    }
    let bad = runner().args(["completions", "nosh"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));

    let page = runner().arg("man").output().unwrap();
    assert!(page.status.success(), "{}", stderr(&page));
    let top = String::from_utf8_lossy(&page.stdout).to_string();
    assert!(top.starts_with(".ie"));
    // `--all DIR`: a page for every page the top one names (runner-run(1)
    // ...), each with the exit statuses and the environment.
    let dir = tempfile::tempdir().unwrap();
    let all = runner()
        .args(["man", "--all"])
        .arg(dir.path().join("man"))
        .output()
        .unwrap();
    assert!(all.status.success(), "{}", stderr(&all));
    let named: Vec<String> = regex::Regex::new(r"runner\\?-([a-z-]+)\(1\)")
        .unwrap()
        .captures_iter(&top)
        .map(|c| format!("runner-{}.1", &c[1]))
        .collect();
    assert!(named.len() >= 15, "{named:?}");
    for p in named.iter().chain([&"runner-policy-lint.1".to_string()]) {
        let text = std::fs::read_to_string(dir.path().join("man").join(p))
            .unwrap_or_else(|e| panic!("{p}: {e}"));
        assert!(
            text.contains(".SH \"ENVIRONMENT\"") && text.contains("RUNNER_MODEL"),
            "{p}"
        );
        assert!(
            text.contains("EXIT STATUS") || text.contains("Exit status"),
            "{p}"
        );
    }
    if !have("man") {
        eprintln!("man is not installed here: the page is only generated");
        return;
    }
    let mut man = std::process::Command::new("man")
        .args(["-l", "-"])
        .env("MANWIDTH", "80")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut man.stdin.take().unwrap(), &page.stdout).unwrap();
    let shown = man.wait_with_output().unwrap();
    assert!(shown.status.success(), "{}", stderr(&shown));
    let text = String::from_utf8_lossy(&shown.stdout);
    for word in [
        "NAME",
        "SYNOPSIS",
        "Runs LLM coding agents",
        "completions",
        "merge",
    ] {
        assert!(text.contains(word), "{word} not in:\n{text}");
    }
}

/// The README's tour task is the shipped one it names, as it is: it runs
/// as shown (the YAML test above runs it), saved where the README says.
#[test]
fn the_tours_task_is_the_file_it_names() {
    let text = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let named = "This one is `tasks/fix-typos.yaml`";
    let at = text.find(named).expect("the tour names its task's file");
    let line = text[..at].matches('\n').count() + 1;
    let (_, block) = blocks(&text, "yaml")
        .into_iter()
        .find(|(l, _)| *l > line)
        .expect("a yaml block after it");
    assert_eq!(
        block,
        std::fs::read_to_string(repo().join("tasks/fix-typos.yaml")).unwrap()
    );
    // And the README stays a front door.
    assert!(text.lines().count() < 250, "{} lines", text.lines().count());
}
