//! `runner init --fleet`: a workflow that runs tasks across every
//! repository of a list each week (a plan job, a matrix of shard jobs that
//! push a branch per passing repository and open its pull request, and a
//! merge job that uploads one report), with the list and a task to start
//! from.

/// The fleet's files, by path.
pub const FILES: &[(&str, &str)] = &[
    (".github/workflows/runner-fleet.yml", WORKFLOW),
    ("fleet/repos.txt", REPOS),
    ("tasks/fleet/example.yaml", TASK),
];

const REPOS: &str = "# The repositories the fleet workflow runs tasks/fleet/*.yaml in: one a
# line, a git URL or a path, with an optional @REF (a branch, tag or commit).
https://github.com/OWNER/service-a
https://github.com/OWNER/service-b@main
";

const TASK: &str = r##"# A task the fleet runs in every repository of fleet/repos.txt (its
# workspace is each repository in turn). Scripted, so it runs offline: give
# it a model (openai:MODEL ...) and a real prompt.
name: notes
prompt: Add a short docs/agent-notes.md saying how to build this repository.
model: scripted
policy:
  default: deny
  rules:
    - allow: ["Read(**)", "Edit(docs/agent-notes.md)"]
checks:
  - run: test -s docs/agent-notes.md
script:
  - tool_calls:
      - {name: write_file, args: {file_path: docs/agent-notes.md, content: "# Notes\n\nBuild with the README's command.\n"}}
  - text: Wrote docs/agent-notes.md.
"##;

const WORKFLOW: &str = r#"# Runs tasks/fleet/*.yaml in every repository of fleet/repos.txt each
# week and by hand: `plan` splits the fleet into shards, each `shard` job
# runs its repositories, pushes a branch per repository whose tasks passed
# and opens its pull request, and `merge` uploads one report.
#
# FLEET_TOKEN: a token that may push branches and open pull requests in
# the fleet's repositories. git and gh use it; the agent's commands never
# see it (the runner scrubs tokens from their environment).
name: runner-fleet

on:
  schedule:
    - cron: "0 4 * * 1"
  workflow_dispatch:

permissions:
  contents: read

env:
  BRANCH: runner/fleet

jobs:
  plan:
    runs-on: ubuntu-latest
    outputs:
      matrix: ${{ steps.plan.outputs.matrix }}
    steps:
      - uses: actions/checkout@v5
        with:
          persist-credentials: false
      - uses: RUNNER_INSTALL
      - id: plan
        run: |
          matrix=$(runner plan --repos fleet/repos.txt --per-shard 20 --max-cost 50 --format github)
          echo "matrix=$matrix" >> "$GITHUB_OUTPUT"

  shard:
    needs: plan
    runs-on: ubuntu-latest
    timeout-minutes: 180
    strategy:
      fail-fast: false
      matrix: ${{ fromJSON(needs.plan.outputs.matrix) }}
    steps:
      - uses: actions/checkout@v5
        with:
          persist-credentials: false
      - uses: RUNNER_INSTALL
      - name: Run the shard, push a branch per passing repository
        id: run
        env:
          OPENAI_API_KEY: ${{ secrets.OPENAI_API_KEY }}
          GH_TOKEN: ${{ secrets.FLEET_TOKEN }}
          SHARD: ${{ matrix.shard }}
          MAX_COST: ${{ matrix.max_cost }}
        run: |
          gh auth setup-git
          out="out-${SHARD%%/*}"
          echo "out=$out" >> "$GITHUB_OUTPUT"
          # exec: no shell holding the secrets stays beside the runner (a
          # command could read them from its environment); the runner
          # writes its exit code to $GITHUB_OUTPUT and exits 0.
          exec runner run --repos fleet/repos.txt --shard "$SHARD" --max-cost "$MAX_COST" \
            --jobs 4 --push "$BRANCH" --out "$out" --github-output "$GITHUB_OUTPUT" \
            tasks/fleet/*.yaml
      - name: Open a pull request for each pushed branch
        env:
          GH_TOKEN: ${{ secrets.FLEET_TOKEN }}
          OUT: ${{ steps.run.outputs.out }}
          CODE: ${{ steps.run.outputs.exit-code }}
        run: |
          # One may be open already.
          for t in "$OUT"/*/*/transcript.json; do
            [ -f "$t" ] || continue
            url=$(jq -r 'select(.repository.pushed) | .repository.url' "$t")
            [ -n "$url" ] || continue
            repo=$(echo "$url" | sed -E 's#^(https://github.com/|git@github.com:)##; s#\.git$##')
            gh pr create -R "$repo" --head "$BRANCH" --title "runner: fleet changes" \
              --body "Made by the runner's fleet workflow; see its report." ||
              echo "$repo: a pull request for $BRANCH is open already"
          done
          exit "$CODE"
      - uses: actions/upload-artifact@v6
        if: always()
        with:
          name: ${{ steps.run.outputs.out }}
          path: ${{ steps.run.outputs.out }}

  merge:
    needs: shard
    if: always()
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v5
        with:
          persist-credentials: false
      - uses: RUNNER_INSTALL
      - uses: actions/download-artifact@v7
        with:
          pattern: out-*
      - name: One report
        run: runner merge --out fleet-out out-* >> "$GITHUB_STEP_SUMMARY"
      - uses: actions/upload-artifact@v6
        if: always()
        with:
          name: fleet-out
          path: fleet-out
"#;
