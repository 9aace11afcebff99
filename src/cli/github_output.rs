//! `runner run --github-output FILE` (and `runner exec`'s): what a GitHub
//! Actions step that ends by `exec`-ing the runner needs from it, written
//! where the step's outputs go (`$GITHUB_OUTPUT`), so that no shell
//! holding the job's secrets has to stay beside the runner to read its
//! exit code.

use std::path::{Path, PathBuf};

use runner_output::Tripwire;

/// What the outputs need of a task's transcript.
#[derive(serde::Deserialize)]
struct Ended {
    task: String,
    #[serde(default)]
    final_answer: String,
    outcome: Outcome,
}

#[derive(serde::Deserialize)]
struct Outcome {
    #[serde(default)]
    tripwire: Option<Tripwire>,
}

/// The run's tasks in `out` (their transcripts), by name.
fn ended(out: &Path) -> Vec<Ended> {
    let mut all: Vec<Ended> = std::fs::read_dir(out)
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .filter_map(|e| std::fs::read(e.path().join("transcript.json")).ok())
                .filter_map(|bytes| serde_json::from_slice::<Ended>(&bytes).ok())
                .collect()
        })
        .unwrap_or_default();
    all.sort_by(|a, b| a.task.cmp(&b.task));
    all
}

/// `name<<DELIMITER`, the text, the delimiter: how `$GITHUB_OUTPUT` takes
/// a value of many lines (the delimiter chosen not to be in it).
fn multiline(name: &str, text: &str) -> String {
    let mut n = 0u32;
    let delimiter = loop {
        let d = format!("RUNNER_EOF_{n}");
        if !text.contains(&d) {
            break d;
        }
        n += 1;
    };
    format!("{name}<<{delimiter}\n{text}\n{delimiter}\n")
}

/// Appends a run's exit code `code` and its outputs in `out` to `file`
/// (GitHub Actions' `$GITHUB_OUTPUT`): `exit-code`, `conclusion`, `junit`,
/// `report`; `last-message`, the final answer of the only task or the
/// last one by name; and when one task wrote an `output.json`, `output`
/// (its path) and `structured-output` (its JSON).
pub fn write(file: &Path, out: &Path, code: i32) -> std::io::Result<()> {
    use std::io::Write;
    let outputs: Vec<PathBuf> = std::fs::read_dir(out)
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .map(|e| e.path().join("output.json"))
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    let tasks = ended(out);
    let mut text = format!(
        "exit-code={code}\nconclusion={}\njunit={}\nreport={}\n",
        conclusion(&tasks, code),
        out.join("junit.xml").display(),
        out.join("report.html").display()
    );
    if let Some(last) = tasks.last() {
        text.push_str(&multiline("last-message", last.final_answer.trim_end()));
    }
    if let [one] = outputs.as_slice() {
        text.push_str(&format!("output={}\n", one.display()));
        if let Ok(json) = std::fs::read(one)
            .map_err(|_| ())
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).map_err(|_| ()))
        {
            text.push_str(&format!("structured-output={json}\n"));
        }
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)?;
    f.write_all(text.as_bytes())
}

/// What a run's end was, in one word for a workflow's `if:`: `passed`,
/// `failed`, `invalid` (exit 2), `resumable` (75), `cancelled` (a signal),
/// or, for a failed run a tripwire ended, the wire (`canary` before
/// `credentials`, `exec`, `network`, `denials`: the most alarming of the
/// tasks' wins).
fn conclusion(tasks: &[Ended], code: i32) -> &'static str {
    match code {
        0 => return "passed",
        2 => return "invalid",
        75 => return "resumable",
        130 | 143 => return "cancelled",
        _ => {}
    }
    let tripped: Vec<Tripwire> = tasks.iter().filter_map(|t| t.outcome.tripwire).collect();
    [
        Tripwire::Canary,
        Tripwire::Credentials,
        Tripwire::Exec,
        Tripwire::Network,
        Tripwire::Denials,
    ]
    .into_iter()
    .find(|w| tripped.contains(w))
    .map_or("failed", Tripwire::as_str)
}
