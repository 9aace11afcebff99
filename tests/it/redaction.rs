//! Secrets by value, not only by name (issue 72): variables whose names do
//! not look secret reach commands, and what of their values is secret by
//! its shape (a webhook URL, a URL's password, a JWT), or whatever a task
//! names under `redact:`, is absent from every output, in every form a
//! command prints it in (plain, hex, base64, reversed, inside JSON).

use std::path::Path;

use crate::common::{runner, stderr, write};

const SLACK: &str = "https://hooks.slack.com/services/T0123ABCD/B0456EFGH/abcdefghijklmnopqrstuvwx";
const DB_PASSWORD: &str = "Pg-pass-2718281828";
const JWT: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
const NAMED: &str = "internal-plain-words-value";

/// Every file under `dir`, and what the run printed.
fn everything(dir: &Path, out: &std::process::Output) -> String {
    let mut all = String::from_utf8_lossy(&out.stdout).into_owned();
    all.push_str(&stderr(out));
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        for e in std::fs::read_dir(&p).unwrap().flatten() {
            let path = e.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                all.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
            }
        }
    }
    all
}

#[test]
fn secret_shaped_values_are_absent_from_every_output_in_every_form() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/a.txt", "a\n");
    let print = [
        "echo $SLACK_WEBHOOK_URL",
        "echo $DATABASE_URL",
        "printf %s \"$DB_PASSWORD_ONLY\" | od -An -tx1 | tr -d ' \\n'; echo",
        "printf %s \"$DB_PASSWORD_ONLY\" | xxd -p -u 2>/dev/null || true",
        "printf %s \"$DB_PASSWORD_ONLY\" | base64",
        "printf x%s \"$DB_PASSWORD_ONLY\" | base64",
        "echo $DATA",
        "printf %s \"$DATA\" | rev",
        "python3 -c \"import json,os; print(json.dumps({'hook': os.environ['SLACK_WEBHOOK_URL'], 'jwt': os.environ['DATA']}))\"",
        "echo $INTERNAL_NOTE",
        "printf '%s\\n' \"$SLACK_WEBHOOK_URL\" \"$DATA\" \"$DB_PASSWORD_ONLY\" > leaked.txt",
    ];
    let calls: Vec<String> = print
        .iter()
        .map(|c| {
            format!(
                "      - {{name: bash, args: {{command: {}}}}}",
                serde_json::to_string(c).unwrap()
            )
        })
        .collect();
    write(
        d,
        "t.yaml",
        &format!(
            "prompt: p\nworkspace: ws\nredact: [INTERNAL_*]\npolicy:\n  default: allow\nscript:\n  - tool_calls:\n{}\n  - text: done\n",
            calls.join("\n")
        ),
    );
    let out = runner()
        .current_dir(d)
        .env("SLACK_WEBHOOK_URL", SLACK)
        .env(
            "DATABASE_URL",
            format!("postgres://app:{DB_PASSWORD}@db.internal:5432/app"),
        )
        .env("DB_PASSWORD_ONLY", DB_PASSWORD)
        .env("DATA", JWT)
        .env("INTERNAL_NOTE", NAMED)
        .args(["run", "--format", "json", "--out", "out"])
        .arg("t.yaml")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let all = everything(&d.join("out"), &out);
    let hex: String = DB_PASSWORD.bytes().map(|b| format!("{b:02x}")).collect();
    let reversed: String = JWT.chars().rev().collect();
    for (what, secret) in [
        ("the webhook", SLACK.trim_start_matches("https://")),
        ("the password", DB_PASSWORD),
        ("its hex", hex.as_str()),
        ("its upper hex", hex.to_ascii_uppercase().as_str()),
        ("its base64", "UGctcGFzcy0yNzE4MjgxODI4"),
        ("the JWT", JWT),
        ("the JWT reversed", reversed.as_str()),
        (
            "the JWT's signature",
            "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        ),
        ("a named variable's value", NAMED),
    ] {
        assert!(!all.contains(secret), "{what} ({secret}) reached an output");
    }
    assert!(d.join("out/report.html").exists() && d.join("out/summary.md").exists());
    // The commands ran and printed: what they printed is marked.
    assert!(all.matches("[REDACTED]").count() >= 10);
    let diff = std::fs::read_to_string(d.join("out/t/changes.diff")).unwrap();
    assert!(
        diff.contains("leaked.txt") && diff.contains("[REDACTED]"),
        "{diff}"
    );
}

#[test]
fn a_redact_entry_that_matches_every_variable_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/a.txt", "a\n");
    write(
        d,
        "t.yaml",
        "prompt: p\nworkspace: ws\nredact: [\"*\"]\nscript:\n  - text: done\n",
    );
    write(d, "p.yaml", "default: deny\nredact: [\"?*\"]\n");
    let out = runner()
        .current_dir(d)
        .args(["validate", "p.yaml", "t.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("t.yaml:3") && err.contains("every variable"),
        "{err}"
    );
    assert!(err.contains("p.yaml:2") && err.contains("`?*`"), "{err}");
}
