//! `runner man [--all DIR]`: the manual page on stdout, or with `--all` a
//! page per command (`runner.1`, `runner-run.1`, `runner-policy-lint.1`
//! ...) written into DIR, each with the exit statuses and the environment
//! the runner reads; the release archive ships them.

use std::path::Path;

use super::CliError;

/// What every page ends with: the variables the runner reads.
const ENVIRONMENT: &str = "OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY: the vendors' keys \
(OPENAI_BASE_URL, ANTHROPIC_BASE_URL, GEMINI_BASE_URL: other servers, a local one). \
RUNNER_MODEL: runner exec's model. CI=true: plain progress lines, and canaries on by default. \
TMPDIR: where tasks' copies are made. OTEL_EXPORTER_OTLP_*: where --otel sends. \
Secret-looking variables are scrubbed from what commands get (a task's env: passes them).";

/// The exit statuses of a command without its own list.
const EXIT_STATUS: &str = "0 success (runner check: allowed). 1 a failure, a denial or a finding, \
as the command's description says. 2 invalid input: nothing ran. \
runner run and runner exec: see runner-run(1).";

/// The manual page of `cmd`, with the sections every page has.
fn page(cmd: clap::Command, own_exit_status: bool) -> Result<Vec<u8>, std::io::Error> {
    let man = clap_mangen::Man::new(cmd);
    let mut out = Vec::new();
    man.render(&mut out)?;
    let section = |title: &str, text: &str| format!(".SH \"{title}\"\n{}\n", roff_text(text));
    if !own_exit_status {
        out.extend(section("EXIT STATUS", EXIT_STATUS).into_bytes());
    }
    out.extend(section("ENVIRONMENT", ENVIRONMENT).into_bytes());
    Ok(out)
}

/// `text` as a roff paragraph: a leading `.` or `'` escaped, `\` doubled.
fn roff_text(text: &str) -> String {
    let t = text.replace('\\', "\\\\");
    if t.starts_with(['.', '\'']) {
        format!("\\&{t}")
    } else {
        t
    }
}

/// The top page (for stdout), or, with `all`, every page written there
/// (and nothing for stdout).
pub fn man(cmd: clap::Command, all: Option<&Path>) -> Result<Option<Vec<u8>>, CliError> {
    let Some(dir) = all else {
        return page(cmd, true)
            .map(Some)
            .map_err(|e| CliError::Failed(format!("writing the manual page: {e}")));
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::Invalid(format!("{}: {e}", dir.display())))?;
    // Built, as --help is: with the `help` subcommands the top page names.
    let mut built = cmd.clone();
    built.build();
    let mut pages = vec![("runner".to_string(), cmd, true)];
    collect(&built, "runner", &mut pages);
    for (name, c, own) in pages {
        let text = page(c.name(name.clone()), own)
            .map_err(|e| CliError::Failed(format!("writing {name}.1: {e}")))?;
        let path = dir.join(format!("{name}.1"));
        crate::workspace::durable_write(&path, &text)
            .map_err(|e| CliError::Failed(format!("writing {}: {e}", path.display())))?;
    }
    Ok(None)
}

/// Each subcommand of `cmd` (named `prefix-sub`), and theirs.
fn collect(cmd: &clap::Command, prefix: &str, pages: &mut Vec<(String, clap::Command, bool)>) {
    for sub in cmd.get_subcommands() {
        let name = format!("{prefix}-{}", sub.get_name());
        // run and exec end their help with the exit statuses.
        let own = sub
            .get_after_help()
            .is_some_and(|h| h.to_string().contains("Exit status"));
        pages.push((name.clone(), sub.clone(), own));
        // `help`'s own subcommands repeat the commands' pages.
        if sub.get_name() != "help" {
            collect(sub, &name, pages);
        }
    }
}
