//! `runner run --github-output FILE`: what a GitHub Actions step that
//! ends by `exec`-ing the runner needs from it, written where the step's
//! outputs go (`$GITHUB_OUTPUT`), so that no shell holding the job's
//! secrets has to stay beside the runner to read its exit code.

use std::path::{Path, PathBuf};

/// Appends a run's exit code `code` and its outputs in `out` to `file`
/// (GitHub Actions' `$GITHUB_OUTPUT`): `exit-code`, `conclusion`, `junit`,
/// `report`, and `output` when one task wrote an `output.json`.
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
    let mut text = format!(
        "exit-code={code}\nconclusion={}\njunit={}\nreport={}\n",
        conclusion(out, code),
        out.join("junit.xml").display(),
        out.join("report.html").display()
    );
    if let [one] = outputs.as_slice() {
        text.push_str(&format!("output={}\n", one.display()));
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
pub fn conclusion(out: &Path, code: i32) -> &'static str {
    use runner_output::Tripwire;
    match code {
        0 => return "passed",
        2 => return "invalid",
        75 => return "resumable",
        130 | 143 => return "cancelled",
        _ => {}
    }
    #[derive(serde::Deserialize)]
    struct Ended {
        outcome: Outcome,
    }
    #[derive(serde::Deserialize)]
    struct Outcome {
        #[serde(default)]
        tripwire: Option<Tripwire>,
    }
    let tripped: Vec<Tripwire> = std::fs::read_dir(out)
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .filter_map(|e| std::fs::read(e.path().join("transcript.json")).ok())
                .filter_map(|bytes| serde_json::from_slice::<Ended>(&bytes).ok())
                .filter_map(|t| t.outcome.tripwire)
                .collect()
        })
        .unwrap_or_default();
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
