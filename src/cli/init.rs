//! `runner init [DIR]`: the files a repository starts from: a task that runs
//! offline at once, a strict policy with a comment on every rule, a
//! workflow that runs the tasks with the action, and the task the
//! pre-commit hooks run on the staged files. Never overwrites a file: one
//! that exists is skipped, one that cannot be written is reported, and the
//! rest are written either way.

use std::path::Path;

use super::init_action::{self, ActionMode, ActionSource};
use super::{CliError, CliResult, Exit};
use crate::workspace::atomic_write_str;

/// `runner init`'s options.
#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// The repository to start (default: the current folder).
    #[arg(default_value = ".")]
    pub dir: std::path::PathBuf,
    /// Write a fleet instead: a workflow that runs tasks/fleet/ across
    /// the repositories of fleet/repos.txt, shard by shard, pushing a
    /// branch and opening a pull request per passing repository.
    #[arg(long)]
    pub fleet: bool,
    /// Where the workflows get the action: `vendored` copies it into
    /// .github/actions/runner/ and uses it from there (runner itself is
    /// installed from the release of this version).
    #[arg(long, value_enum, default_value_t, value_name = "MODE")]
    pub action: ActionMode,
    /// Use the action from this repository and ref instead of a copy
    /// (OWNER/REPO@REF, such as acme/runner@v0.2.0).
    #[arg(long, value_name = "OWNER/REPO@REF", conflicts_with = "action")]
    pub action_repo: Option<String>,
}

const TASK: &str = r##"# A first task. It is scripted (`model: scripted`): its model's turns are
# written below, so it runs offline, with no key. Make it real by naming a
# model (openai:gpt-4.1-mini, anthropic:claude-sonnet-4-5, gemini:gemini-2.5-flash;
# the key comes from OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY),
# writing your own prompt and removing `script:`.
name: example
prompt: Write a short note on what this repository holds to docs/agent-notes.md.
model: scripted
policy: ../policies/ci.yaml
workspace: ..                  # the repository root (relative to this file)
max_turns: 5
checks:                        # run after the agent stops; all must pass
  - run: test -s docs/agent-notes.md
script:
  - tool_calls:
      - {name: ls, args: {path: .}}
  - tool_calls:
      - name: write_file
        args:
          file_path: docs/agent-notes.md
          content: "# Notes\n\nWritten by the example task of runner.\n"
  - text: Wrote docs/agent-notes.md.
"##;

const POLICY: &str = r#"# The policy the tasks in tasks/ run under (each names it with
# `policy: ../policies/ci.yaml`). Every tool call the agent makes is decided
# by these rules; nobody is asked. Try one without running anything:
#   runner check --policy policies/ci.yaml bash '{"command": "git status"}'
default: deny                  # a call that needs approval and matches no rule

rules:
  # What the agent may change. Reading is allowed unless denied below.
  - allow: ["Edit(docs/**)", "Edit(src/**)"]

  # Commands that only look at the repository.
  - allow: ["Bash(git status:*)", "Bash(git diff:*)", "Bash(git log:*)", "Bash(ls:*)"]

  # Secrets never reach the model, whatever else allows them. `./.env` is
  # the file at the root; `.env` alone would also deny every recursive read
  # (`grep -r`), since any folder could hold one.
  - deny: ["Read(./.env)", "Edit(./.env)", "Read(**/*.pem)", "Read(**/*.key)"]
    reason: secrets stay out of the model's context

  # What steers the agent is off limits to it.
  - deny: ["Edit(.github/**)", "Edit(policies/**)", "Edit(tasks/**)"]
    reason: the agent must not change its own CI, tasks or policy

  # No deletions, downloads or root, whichever way they are spelled.
  - deny: ["Bash(rm:*)", "Bash(curl:*)", "Bash(wget:*)", "Bash(sudo:*)"]
    reason: no deletions, no network, no root

tests:                         # checked when the policy loads
  - {call: "Bash(git status && rm -rf /)", expect: deny}
  - {call: "Edit(docs/agent-notes.md)", expect: allow}
  - {call: "Edit(.github/workflows/runner.yml)", expect: deny}
  - {call: "Read(.env)", expect: deny}
"#;

const WORKFLOW: &str = r#"# Runs the agent tasks in tasks/ every night and by hand, and keeps their
# evidence (transcripts, diffs, junit.xml) as the artifact `runner-out`.
# For pull requests, read tasks and policies from the base branch, never
# from the pull request: a pull request must not change what steers the
# agent.
name: runner

on:
  schedule:
    - cron: "0 3 * * *"
  workflow_dispatch:

permissions:
  contents: read

jobs:
  agent-tasks:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    steps:
      - uses: actions/checkout@v5
        with:
          persist-credentials: false
      - uses: RUNNER_ACTION
        with:
          tasks: tasks/*.yaml
          out: runner-out
          # The key, for the runner only (masked in the log): or
          # anthropic-api-key, gemini-api-key.
          openai-api-key: ${{ secrets.OPENAI_API_KEY }}
          # Post summary.md to the pull request that triggered the run
          # (add `pull-requests: write` to the permissions above).
          # comment: true
"#;

const COMPARE_WORKFLOW: &str = r#"# Written by `runner init`. A pull request that changes tasks/ or
# policies/ runs the tasks on both sides, several times each, and fails
# when a task passes less often than the base (by more than the counts can
# put down to chance: `runner compare`, Fisher's exact test) or costs
# more. Off until you turn it on: uncomment `pull_request:` below; it needs
# a real model in the tasks and its key.
name: runner compare

on:
  workflow_dispatch:
    inputs:
      base:
        description: The commit to compare against.
        default: HEAD~1
  # pull_request:
  #   paths: ["tasks/**", "policies/**"]

permissions:
  contents: read

jobs:
  compare:
    runs-on: ubuntu-latest
    timeout-minutes: 60
    steps:
      - uses: actions/checkout@v5
        with:
          fetch-depth: 0
          persist-credentials: false
      - name: Check out the base
        env:
          BASE: ${{ github.event.pull_request.base.sha || inputs.base }}
        run: git checkout --quiet "$BASE"
      - uses: RUNNER_ACTION
        with:
          tasks: tasks/*.yaml
          repeat: "5"
          out: base-out
          artifact-name: runner-base
          fail-on-task-failure: "false"
          openai-api-key: ${{ secrets.OPENAI_API_KEY }}
      - name: Check out the change
        run: git checkout --quiet "$GITHUB_SHA"
      - uses: RUNNER_ACTION
        with:
          tasks: tasks/*.yaml
          repeat: "5"
          out: new-out
          artifact-name: runner-new
          fail-on-task-failure: "false"
          openai-api-key: ${{ secrets.OPENAI_API_KEY }}
      - name: Compare
        run: runner compare base-out new-out | tee -a "$GITHUB_STEP_SUMMARY"
"#;

const PRE_COMMIT_TASK: &str = r##"# The task the pre-commit hooks run (runner's `.pre-commit-hooks.yaml`:
# `runner run --apply --quiet --out .runner-out tasks/pre-commit/*.yaml
# --files STAGED...`). The staged files fill {{files}}; the changes of a
# task that passes are applied to the working tree, and a task that fails
# fails the commit. `runner init` added `.runner-out/` to .gitignore: the hook keeps its
# evidence there. Scripted, so it runs offline: name a model and remove
# `script:` to make it real.
name: staged-files
prompt: "Remove trailing whitespace from these files, changing nothing else: {{files}}"
model: scripted
policy:
  default: deny
  rules:
    - allow: ["Edit({{files}})"]     # the staged files, and nothing else
workspace: ../..                     # the repository root (relative to this file)
max_turns: 5
checks:
  - run: "! grep -n '[[:blank:]]$' {{files}}"
script:
  - text: The staged files have no trailing whitespace.
"##;

/// Writes the starter files into `args.dir`; exit 0, or 2 when one could
/// not be written (the others are written all the same).
pub fn init(args: &InitArgs) -> CliResult {
    let (dir, fleet) = (args.dir.as_path(), args.fleet);
    let source = match (&args.action_repo, args.action) {
        (Some(spec), _) => ActionSource::repo(spec)?,
        (None, ActionMode::Vendored) => ActionSource::vendored(),
    };
    let starter = [
        ("tasks/example.yaml", TASK),
        ("policies/ci.yaml", POLICY),
        (".github/workflows/runner.yml", WORKFLOW),
        (".github/workflows/runner-compare.yml", COMPARE_WORKFLOW),
        ("tasks/pre-commit/staged-files.yaml", PRE_COMMIT_TASK),
    ];
    let chosen: &[(&str, &str)] = if fleet {
        super::init_fleet::FILES
    } else {
        &starter
    };
    let vendored: &[(&str, &str)] = match source {
        ActionSource::Vendored { .. } => init_action::VENDORED_FILES,
        ActionSource::Repo { .. } => &[],
    };
    let mut failed = Vec::new();
    for &(rel, template) in chosen.iter().chain(vendored) {
        let text = &if rel.starts_with(".github/workflows/") {
            init_action::render(template, &source)
        } else {
            template.to_string()
        };
        let path = dir.join(rel);
        if path.symlink_metadata().is_ok() {
            eprintln!("skipped {rel}: it exists");
            continue;
        }
        let made = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|_| atomic_write_str(&path, text));
        match made {
            Ok(()) => eprintln!("wrote {rel}"),
            Err(e) => {
                eprintln!("could not write {rel}: {e}");
                failed.push(format!("{}: {e}", path.display()));
            }
        }
    }
    if let Err(e) = ignore_outputs(dir) {
        eprintln!("could not write .gitignore: {e}");
        failed.push(format!("{}: {e}", dir.join(".gitignore").display()));
    }
    if !failed.is_empty() {
        return Err(CliError::Invalid(failed.join("; ")));
    }
    if let Some(note) = source.note() {
        eprintln!("{note}");
    }
    if fleet {
        eprintln!(
            "next: list the repositories in fleet/repos.txt, then `runner run --repos fleet/repos.txt tasks/fleet/*.yaml`; the workflow needs the secret FLEET_TOKEN"
        );
        return Ok(Exit::Passed);
    }
    eprintln!("next: runner run tasks/*.yaml");
    eprintln!(
        "pre-commit: the runner hooks run tasks/pre-commit/*.yaml on the staged files, keeping their outputs in .runner-out/"
    );
    Ok(Exit::Passed)
}

/// The folders runs leave their outputs in (`runner run`'s default, the
/// pre-commit hook's), which a repository does not commit.
const OUTPUT_FOLDERS: &[&str] = &["runner-out/", ".runner-out/"];

/// Adds the output folders to `dir`'s `.gitignore` (made when missing),
/// each once, keeping what it holds; says what it added.
fn ignore_outputs(dir: &Path) -> std::io::Result<()> {
    let path = dir.join(".gitignore");
    let held = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    let missing: Vec<&str> = OUTPUT_FOLDERS
        .iter()
        .copied()
        .filter(|f| {
            !held
                .lines()
                .any(|l| l.trim() == *f || l.trim() == f.trim_end_matches('/'))
        })
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let mut text = held;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("# runner's outputs (transcripts, diffs, junit.xml)\n");
    for f in &missing {
        text.push_str(f);
        text.push('\n');
    }
    atomic_write_str(&path, &text)?;
    eprintln!("added {} to .gitignore", missing.join(" and "));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_starter_policy_loads_and_passes_its_tests() {
        runner_policy::parse_policy_yaml(POLICY, Path::new("policies/ci.yaml")).unwrap();
    }
}
