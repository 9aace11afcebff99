//! `runner run --github-output FILE`: what a GitHub Actions step that
//! ends by `exec`-ing the runner needs from it, written where the step's
//! outputs go (`$GITHUB_OUTPUT`), so that no shell holding the job's
//! secrets has to stay beside the runner to read its exit code.

use std::path::{Path, PathBuf};

/// Appends a run's exit code `code` and its outputs in `out` to `file`
/// (GitHub Actions' `$GITHUB_OUTPUT`): `exit-code`, `junit`, `report`, and
/// `output` when one task wrote an `output.json`.
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
        "exit-code={code}\njunit={}\nreport={}\n",
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
