//! `runner policy lint FILE...`: what a policy's rules say against what
//! signatures can ever be (`runner_policy::lint_policy`): rules that never
//! match, rules an earlier rule shadows, allow rules a deny rule
//! overrules, unanchored deny paths. Findings go to stdout as
//! `file:line:column: error|warning: rule: message`; exit 0 for none, 1 for
//! some, 2 when a file does not load. `runner validate` runs the same
//! checks: it prints the warnings and fails on the errors.

use std::path::{Path, PathBuf};

use super::{CliError, CliResult, Exit};
use runner_policy::{ConfigError, LintFinding, PolicyFile, Severity, lint_policy};

/// Lints every file; load errors of all of them are reported together.
pub fn lint(files: &[PathBuf]) -> CliResult {
    let mut errors = Vec::new();
    let mut found = 0;
    for f in files {
        match lint_file(f) {
            Ok(findings) => {
                for x in &findings {
                    println!("{x}");
                }
                found += findings.len();
            }
            Err(es) => errors.extend(es),
        }
    }
    if !errors.is_empty() {
        return Err(CliError::Config(errors));
    }
    eprintln!("{}", credentials_note(files));
    if found == 0 {
        eprintln!("{} file(s): no findings", files.len());
        Ok(Exit::Passed)
    } else {
        Ok(Exit::Failed)
    }
}

/// What the built-in credentials layer denies, and which rules of
/// `files` give a file of it back (an allow that names it, with a reason).
fn credentials_note(files: &[PathBuf]) -> String {
    let layer = runner_policy::credentials_layer();
    let denied: Vec<&str> = layer
        .rules
        .iter()
        .map(|r| r.pattern.text.as_str())
        .collect();
    let mut note = format!(
        "{} (in every task, before these files): deny {}",
        runner_policy::CREDENTIALS_LAYER,
        denied.join(", ")
    );
    for f in files {
        let Ok(policy) = runner_policy::load_policy_file(f) else {
            continue;
        };
        for r in policy
            .rules
            .iter()
            .filter(|r| runner_policy::overrides_credentials(r))
        {
            let named = runner_policy::credential_file_named(&r.pattern).is_some();
            if named {
                note.push_str(&format!(
                    "\n{}:{}: `allow {}` gives back what it names ({})",
                    f.display(),
                    r.line,
                    r.pattern.text,
                    r.reason.as_deref().unwrap_or_default()
                ));
            }
        }
    }
    note
}

/// The findings of one policy file, which must load.
pub fn lint_file(path: &Path) -> Result<Vec<LintFinding>, Vec<ConfigError>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| vec![ConfigError::new(path, 0, 0, format!("cannot read: {e}"))])?;
    let pf: PolicyFile = serde_saphyr::from_str(&text)
        .map_err(|e| vec![ConfigError::from_yaml_in(path, &text, &e)])?;
    runner_policy::compile_policy_unlinted(&pf, path, path.display().to_string())?;
    Ok(lint_policy(&pf, path))
}

/// `runner validate`'s part: a policy file's lint warnings, on stderr. (Its
/// errors are load errors: see `runner_policy::load`.) Only parsed here:
/// `validate` compiles it.
pub fn print_warnings(path: &Path) {
    let Ok(text) = std::fs::read_to_string(path) else {
        return;
    };
    let Ok(pf) = serde_saphyr::from_str::<PolicyFile>(&text) else {
        return;
    };
    for x in lint_policy(&pf, path)
        .iter()
        .filter(|x| x.severity == Severity::Warning)
    {
        eprintln!("{x}");
    }
}
