//! One decision everywhere (issue 73, item 7): `runner check --backstops
//! auto` (the backstops a run here holds, as `runner doctor` reports
//! them), `runner tool bash` (which runs the call as a run would, in a
//! copy of the workspace) and a run decide each call of a table alike.

use std::path::Path;

use crate::common::{bash_turns, git, read_json, runner, stderr, write};

const POLICIES: &[(&str, &str)] = &[
    (
        "team",
        "default: allow\nrules:\n  - deny: [\"Read(./.env)\", \"Edit(.github/**)\", \"Bash(git push:*)\", \"Bash(rm -rf:*)\"]\n",
    ),
    (
        "list",
        "default: deny\nrules:\n  - allow: [\"Bash(cat:*)\", \"Bash(grep:*)\", \"Bash(find:*)\", \"Bash(xargs:*)\", \"Bash(python3:*)\", \"Bash(echo:*)\", \"Bash(rg:*)\", \"Bash(sed:*)\", \"Edit(src/**)\"]\n  - deny: [\"Read(./.env)\", \"Edit(.github/**)\", \"Bash(git push:*)\"]\n",
    ),
];

const CALLS: &[&str] = &[
    "cat README.md",
    "cat .env",
    "python3 -c 'print(6*7)'",
    "perl -pi -e 's/a/b/' src/f.txt",
    "cat <<'PY' > /tmp/one-decision.py && python3 /tmp/one-decision.py\nprint(1)\nPY",
    "cat ~/.ssh/id_rsa",
    "cat /etc/os-release",
    "find . -name '*.txt' | xargs grep -l a",
    "grep -R secret -n",
    "rg --pre cat x .",
    "sed 's/x/echo hi/e' src/f.txt",
    "echo hi > .github/x.yml",
    "git push origin HEAD",
    "rm -rf src/gone",
];

fn workspace(d: &Path) {
    write(d, "ws/README.md", "readme\n");
    write(d, "ws/src/f.txt", "a\n");
    write(d, "ws/src/gone/x", "x\n");
    write(d, "ws/.env", "TOKEN=secret\n");
    git(&d.join("ws"), &["init", "-q"]);
    git(&d.join("ws"), &["add", "README.md", "src"]);
    git(&d.join("ws"), &["commit", "-qm", "init"]);
}

fn verdict_of_check(d: &Path, policy: &Path, cmd: &str) -> String {
    let o = runner()
        .current_dir(d)
        .args(["check", "--backstops", "auto", "--policy"])
        .arg(policy)
        .args(["--workspace", "ws", "bash"])
        .arg(serde_json::json!({ "command": cmd }).to_string())
        .output()
        .unwrap();
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{cmd}: {e}: {}", stderr(&o)));
    v["decision"].as_str().unwrap().to_string()
}

fn verdict_of_tool(d: &Path, policy: &Path, cmd: &str) -> String {
    let o = runner()
        .current_dir(d)
        .args(["tool", "bash"])
        .arg(serde_json::json!({ "command": cmd }).to_string())
        .args(["--workspace", "ws", "--policy"])
        .arg(policy)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    if out.starts_with("Error (permission denied)") {
        "deny".into()
    } else {
        "allow".into()
    }
}

#[test]
fn check_auto_tool_and_run_decide_a_table_alike() {
    for (name, yaml) in POLICIES {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        workspace(d);
        let policy = write(d, "p.yaml", yaml);
        let task = write(
            d,
            "t.yaml",
            &format!(
                "prompt: p\nworkspace: ws\npolicy: p.yaml\nscript:\n{}  - text: done\n",
                bash_turns(CALLS)
            ),
        );
        let o = runner()
            .current_dir(d)
            .args(["run", "-q", "--out", "out"])
            .arg(&task)
            .output()
            .unwrap();
        assert!(o.status.code().is_some(), "{}", stderr(&o));
        let t = read_json(d.join("out/t/transcript.json"));
        let calls = t["tool_calls"].as_array().unwrap();
        assert_eq!(calls.len(), CALLS.len());
        let mut table = Vec::new();
        let mut differ = false;
        for (cmd, call) in CALLS.iter().zip(calls) {
            let run = call["decision"]["decision"].as_str().unwrap().to_string();
            let check = verdict_of_check(d, &policy, cmd);
            let tool = verdict_of_tool(d, &policy, cmd);
            differ |= run != check || run != tool;
            table.push(format!("{cmd:?}: run {run}, check {check}, tool {tool}"));
        }
        assert!(!differ, "policy {name}:\n{}", table.join("\n"));
        // The table is not one answer: each policy allows some and
        // denies some.
        assert!(table.iter().any(|r| r.contains("run allow")), "{table:?}");
        assert!(table.iter().any(|r| r.contains("run deny")), "{table:?}");
    }
}
