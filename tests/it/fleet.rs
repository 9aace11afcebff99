//! Fleet runs (`runner run --repos`, issue 45) over real git repositories
//! in temp folders, by `file://` URL and by path: every task in every
//! repository at its ref, outputs per repository, a junit suite and a
//! summary row per repository, a repository that cannot be fetched failing
//! alone, `--max-failures`, the cache reused and fetched again, and the
//! list's mistakes with their lines.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::{read_json, runner, stderr, write};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A repository at `dir` whose `status.txt` says `status`; its commit.
fn repository(dir: &Path, status: &str) -> String {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    write(dir, "status.txt", &format!("{status}\n"));
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "first"]);
    git(dir, &["rev-parse", "HEAD"])
}

/// A task that writes notes.txt and passes when status.txt says ok.
fn task(d: &Path) {
    write(
        d,
        "tasks/notes.yaml",
        "name: notes\nprompt: Write notes.\npolicy:\n  default: allow\nchecks:\n  - run: grep -qx ok status.txt\nscript:\n  - tool_calls:\n      - {name: write_file, args: {file_path: notes.txt, content: \"notes\\n\"}}\n  - text: Wrote notes.\n",
    );
}

/// `runner run` of the notes task over repos.txt, as in CI.
fn fleet_cmd(d: &Path, extra: &[&str]) -> Command {
    let mut c = runner();
    c.current_dir(d)
        .env("CI", "true")
        .args(["run", "--repos", "repos.txt", "--repos-cache", "cache"])
        .args(["--out", "out"])
        .args(extra)
        .arg("tasks/notes.yaml");
    c
}

fn fleet(d: &Path, extra: &[&str]) -> std::process::Output {
    fleet_cmd(d, extra).output().unwrap()
}

/// The transcripts of the run in `out`, by repository URL.
fn by_url(out: &Path) -> Vec<(String, Value)> {
    transcripts(out, "notes")
}

/// The transcripts of task `task` in each repository of `out`, with their
/// repository's URL, in its order.
fn transcripts(out: &Path, task: &str) -> Vec<(String, Value)> {
    let mut all = Vec::new();
    for repo in std::fs::read_dir(out).unwrap().flatten() {
        let t = repo.path().join(task).join("transcript.json");
        if t.is_file() {
            let t = read_json(&t);
            all.push((t["repository"]["url"].as_str().unwrap().to_string(), t));
        }
    }
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all
}

/// The transcript among `runs` whose repository's URL ends with `end`.
fn of(runs: &[(String, Value)], end: &str) -> Value {
    runs.iter()
        .find(|(u, _)| u.ends_with(end))
        .unwrap_or_else(|| panic!("no {end} in {runs:?}"))
        .1
        .clone()
}

#[test]
fn every_task_runs_in_every_repository_with_a_report_per_repository() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = repository(&d.join("src/alpha"), "ok");
    let b = repository(&d.join("src/beta"), "broken");
    // gamma's `dev` branch is the one listed; main stays behind.
    let gamma = d.join("src/gamma");
    repository(&gamma, "broken");
    git(&gamma, &["checkout", "-qb", "dev"]);
    write(&gamma, "status.txt", "ok\n");
    git(&gamma, &["commit", "-qam", "fixed"]);
    let g = git(&gamma, &["rev-parse", "HEAD"]);
    git(&gamma, &["checkout", "-q", "main"]);
    write(
        d,
        "repos.txt",
        &format!(
            "# the fleet\nfile://{}\nsrc/beta   # a path, from this list's folder\nfile://{}@dev\nfile://{}/src/missing\n",
            d.join("src/alpha").display(),
            gamma.display(),
            d.display()
        ),
    );
    task(d);
    let out = fleet(d, &["--jobs", "2"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("src/missing: cannot fetch it"), "{err}");
    let runs = by_url(&d.join("out"));
    assert_eq!(runs.len(), 4, "{runs:?}");
    let find = |end: &str| of(&runs, end);
    let (alpha, beta, gamma_t, missing) = (
        find("alpha"),
        find("src/beta"),
        find("gamma"),
        find("missing"),
    );
    assert_eq!(alpha["outcome"]["status"], "passed");
    assert_eq!(alpha["repository"]["commit"], a.as_str());
    assert_eq!(beta["outcome"]["status"], "failed");
    assert_eq!(beta["repository"]["commit"], b.as_str());
    assert_eq!(gamma_t["outcome"]["status"], "passed", "{gamma_t}");
    assert_eq!(gamma_t["repository"]["git_ref"], "dev");
    assert_eq!(gamma_t["repository"]["commit"], g.as_str());
    assert_eq!(missing["outcome"]["status"], "error");
    let why = missing["outcome"]["reason"].as_str().unwrap();
    assert!(why.starts_with("cannot fetch file://"), "{why}");
    assert!(missing["repository"].get("commit").is_none());
    // Each changed its own copy; the diff is in the repository's folder.
    let folder = alpha["repository"]["folder"].as_str().unwrap();
    let diff =
        std::fs::read_to_string(d.join("out").join(folder).join("notes/changes.diff")).unwrap();
    assert!(diff.contains("+notes"), "{diff}");
    // A suite per repository, named by its folder, a case per task.
    let junit = std::fs::read_to_string(d.join("out/junit.xml")).unwrap();
    assert_eq!(junit.matches("<testsuite ").count(), 4, "{junit}");
    assert!(
        junit.contains(&format!("<testsuite name=\"{folder}\"")),
        "{junit}"
    );
    assert!(junit.contains(&format!("value=\"{a}\"")), "{junit}");
    assert_eq!(
        junit.matches("<testcase name=\"notes\"").count(),
        4,
        "{junit}"
    );
    let summary = std::fs::read_to_string(d.join("out/summary.md")).unwrap();
    assert!(summary.contains("2/4 repositories passed"), "{summary}");
    let html = std::fs::read_to_string(d.join("out/report.html")).unwrap();
    assert!(html.contains("<h2>2/4 repositories passed</h2>"), "{html}");
    assert!(html.contains(&format!("<code>{}</code>", &a[..12])));
    assert!(summary.contains("| not fetched |"), "{summary}");
    assert!(summary.contains(&a[..12]), "{summary}");
}

#[test]
fn the_cache_is_reused_and_fetched_again() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let first = repository(&d.join("src/alpha"), "ok");
    write(
        d,
        "repos.txt",
        &format!("file://{}\n", d.join("src/alpha").display()),
    );
    task(d);
    assert!(fleet(d, &[]).status.success());
    let t = &by_url(&d.join("out"))[0].1;
    assert_eq!(t["repository"]["commit"], first.as_str());
    let folder = t["repository"]["folder"].as_str().unwrap().to_string();
    let cached = d.join("cache").join(&folder);
    // A mark in the cached clone: a second run fetches into it, not anew.
    write(&cached, ".git/runner-test-mark", "x");
    write(&cached, "stray.txt", "left by someone\n");
    write(&d.join("src/alpha"), "more.txt", "more\n");
    git(&d.join("src/alpha"), &["add", "."]);
    git(&d.join("src/alpha"), &["commit", "-qm", "more"]);
    let second = git(&d.join("src/alpha"), &["rev-parse", "HEAD"]);
    // Run from a git hook, as the pre-commit entry is: the hook's GIT_DIR
    // and GIT_INDEX_FILE name another repository, which git must not act
    // on while it fetches into the cache.
    let hook = d.join("hooked");
    repository(&hook, "hook");
    let out = fleet_cmd(d, &[])
        .env("GIT_DIR", hook.join(".git"))
        .env("GIT_INDEX_FILE", hook.join(".git/index"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        git(&hook, &["remote"]),
        "",
        "the hook's repository got a remote"
    );
    assert!(
        cached.join(".git/runner-test-mark").exists(),
        "cloned again"
    );
    assert!(!cached.join("stray.txt").exists(), "a stray file was kept");
    let t = &by_url(&d.join("out"))[0].1;
    assert_eq!(t["repository"]["commit"], second.as_str());
}

#[test]
fn max_failures_starts_no_new_repository_once_reached() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut list = String::new();
    for (name, status) in [("a", "broken"), ("b", "ok"), ("c", "ok")] {
        repository(&d.join("src").join(name), status);
        list.push_str(&format!("file://{}\n", d.join("src").join(name).display()));
    }
    write(d, "repos.txt", &list);
    task(d);
    let out = fleet(d, &["--max-failures", "1", "--jobs", "1"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let runs = by_url(&d.join("out"));
    let status: Vec<&str> = runs
        .iter()
        .map(|(_, t)| t["outcome"]["status"].as_str().unwrap())
        .collect();
    assert_eq!(status, ["failed", "skipped", "skipped"], "{runs:?}");
    let why = runs[1].1["outcome"]["reason"].as_str().unwrap();
    assert!(why.contains("--max-failures"), "{why}");
}

#[test]
fn mistakes_in_the_list_are_errors_with_their_lines_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    task(d);
    write(
        d,
        "repos.txt",
        "https://example.com/org/a\nhttps://example.com/org/b two\nhttps://EXAMPLE.com/org/a.git@v2\n",
    );
    let out = fleet(d, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("repos.txt:2:1") && err.contains("one repository a line"),
        "{err}"
    );
    assert!(
        err.contains("repos.txt:3:1") && err.contains("lines 1 and 3"),
        "{err}"
    );
    assert!(!d.join("out").exists() && !d.join("cache").exists());
}

/// A bare repository at `bare` (the origin) whose main branch has
/// `status.txt` saying `status`; its commit.
fn origin(d: &Path, bare: &Path, status: &str) -> String {
    git(
        d,
        &[
            "init",
            "-q",
            "--bare",
            "-b",
            "main",
            &bare.display().to_string(),
        ],
    );
    let work = d.join(format!(
        "work-{}",
        bare.file_name().unwrap().to_string_lossy()
    ));
    let commit = repository(&work, status);
    git(&work, &["push", "-q", &bare.display().to_string(), "main"]);
    commit
}

/// `--push`: the passing repository gets one commit of its changes on
/// the branch, on the commit its tasks ran on; the failing one gets no
/// branch; a remote that rejects the push fails that repository alone;
/// a second run replaces the run's own branch (with a lease).
#[test]
fn push_makes_a_branch_for_each_passing_repository() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (ok, broken, guarded) = (
        d.join("ok.git"),
        d.join("broken.git"),
        d.join("guarded.git"),
    );
    let base = origin(d, &ok, "ok");
    origin(d, &broken, "broken");
    origin(d, &guarded, "ok");
    // guarded refuses to move a branch anywhere but forward, and has the
    // branch already at an unrelated commit.
    git(&guarded, &["config", "receive.denyNonFastForwards", "true"]);
    let other = d.join("other");
    repository(&other, "other");
    git(
        &other,
        &[
            "push",
            "-q",
            &guarded.display().to_string(),
            "main:refs/heads/runner/notes",
        ],
    );
    let url = |p: &Path| format!("file://{}", p.display());
    write(
        d,
        "repos.txt",
        &format!("{}\n{}\n{}\n", url(&ok), url(&broken), url(&guarded)),
    );
    task(d);
    let push = [
        "--push",
        "runner/notes",
        "--author",
        "Fleet Bot <bot@example.com>",
    ];
    let out = fleet(d, &push);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // ok: one commit on the cloned one, holding the change.
    let head = git(&ok, &["rev-parse", "refs/heads/runner/notes"]);
    assert_eq!(git(&ok, &["rev-parse", "runner/notes^"]), base);
    assert_eq!(git(&ok, &["show", "runner/notes:notes.txt"]), "notes");
    assert_eq!(
        git(&ok, &["log", "-1", "--format=%an <%ae>|%s", "runner/notes"]),
        "Fleet Bot <bot@example.com>|runner: notes"
    );
    let runs = by_url(&d.join("out"));
    let t = |end: &str| of(&runs, end);
    let pushed = &t("ok.git")["repository"]["pushed"];
    assert_eq!(pushed["branch"], "runner/notes");
    assert_eq!(pushed["commit"], head.as_str());
    assert_eq!(pushed["base"], base.as_str());
    // broken: its check failed, so no branch.
    assert!(git(&broken, &["branch", "--list", "runner/notes"]).is_empty());
    assert!(t("broken.git")["repository"].get("pushed").is_none());
    // guarded: the remote refused; that repository failed, with why.
    let g = t("guarded.git");
    assert_eq!(g["outcome"]["status"], "failed", "{g}");
    let why = g["outcome"]["reason"].as_str().unwrap();
    assert!(
        why.contains("--push runner/notes: the push was rejected"),
        "{why}"
    );
    // A second run replaces its own branch from the first.
    let again = fleet(d, &push);
    assert_eq!(again.status.code(), Some(1), "{}", stderr(&again));
    assert_eq!(git(&ok, &["rev-parse", "runner/notes^"]), base);
    let second = of(&by_url(&d.join("out")), "ok.git");
    assert_eq!(second["outcome"]["status"], "passed");
    assert_eq!(
        git(&ok, &["rev-parse", "refs/heads/runner/notes"]),
        second["repository"]["pushed"]["commit"].as_str().unwrap()
    );
    let bad = fleet(d, &["--push", "x", "--author", "nobody"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("expected `Name <email>`"),
        "{}",
        stderr(&bad)
    );
}

/// `--shard K/N` splits a fleet by repository (each with all its tasks):
/// the shards cover every repository once, and `runner merge` joins them
/// into one report with a suite per repository.
#[test]
fn shards_cover_each_repository_once_and_merge() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut list = String::new();
    for name in ["a", "b", "c", "d", "e", "f"] {
        repository(&d.join("src").join(name), "ok");
        list.push_str(&format!("file://{}\n", d.join("src").join(name).display()));
    }
    write(d, "repos.txt", &list);
    task(d);
    write(
        d,
        "tasks/second.yaml",
        "name: second\nprompt: Nothing.\nscript:\n  - text: Done.\n",
    );
    let mut seen = Vec::new();
    for k in ["1/2", "2/2"] {
        let out = runner()
            .current_dir(d)
            .env("CI", "true")
            .args([
                "run",
                "--repos",
                "repos.txt",
                "--repos-cache",
                "cache",
                "--shard",
                k,
            ])
            .args(["--out", &format!("out-{}", &k[..1])])
            .args(["tasks/notes.yaml", "tasks/second.yaml"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{k}: {}", stderr(&out));
        let runs = by_url(&d.join(format!("out-{}", &k[..1])));
        for (url, t) in &runs {
            // Both tasks of a repository are in its shard.
            let folder = t["repository"]["folder"].as_str().unwrap();
            let second = d
                .join(format!("out-{}", &k[..1]))
                .join(folder)
                .join("second/transcript.json");
            assert!(second.is_file(), "{k}: {url}");
            seen.push(url.clone());
        }
    }
    seen.sort();
    let before = seen.len();
    seen.dedup();
    assert_eq!((before, seen.len()), (6, 6), "{seen:?}");
    let merged = runner()
        .current_dir(d)
        .args(["merge", "--out", "merged", "out-1", "out-2"])
        .output()
        .unwrap();
    assert!(merged.status.success(), "{}", stderr(&merged));
    assert_eq!(
        String::from_utf8_lossy(&merged.stdout).trim(),
        "12 passed, 0 failed"
    );
    let junit = std::fs::read_to_string(d.join("merged/junit.xml")).unwrap();
    assert_eq!(junit.matches("<testsuite ").count(), 6, "{junit}");
    assert_eq!(junit.matches("<testcase ").count(), 12, "{junit}");
    assert_eq!(by_url(&d.join("merged")).len(), 6);
}

/// `runner plan`: a GitHub matrix whose shards cover the fleet with their
/// shares of the budget, and a Kubernetes Indexed Job that validates
/// against the Kubernetes schemas.
#[test]
fn plan_prints_a_matrix_and_a_valid_indexed_job() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let list: String = (1..=9)
        .map(|i| format!("https://github.com/acme/service-{i}\n"))
        .collect();
    write(d, "repos.txt", &list);
    let plan = |args: &[&str]| {
        runner()
            .current_dir(d)
            .args(["plan", "--repos", "repos.txt"])
            .args(args)
            .output()
            .unwrap()
    };
    let out = plan(&["--per-shard", "4", "--max-cost", "9", "--format", "github"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let m: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = m["include"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "{m}");
    let repos: u64 = rows
        .iter()
        .map(|r| r["repositories"].as_u64().unwrap())
        .sum();
    assert_eq!(repos, 9);
    let spent: f64 = rows
        .iter()
        .map(|r| r["max_cost"].as_str().unwrap().parse::<f64>().unwrap())
        .sum();
    assert!(spent <= 9.0 && spent > 8.9, "{m}");
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r["shard"], format!("{}/3", i + 1));
    }
    let out = plan(&[
        "--shards",
        "4",
        "--max-cost",
        "8",
        "--format",
        "k8s",
        "tasks/a.yaml",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let job = String::from_utf8_lossy(&out.stdout).to_string();
    for part in [
        "completionMode: Indexed",
        "completions: 4",
        "backoffLimitPerIndex: 1",
        "maxFailedIndexes: 1",
        "--shard \\\"$((JOB_COMPLETION_INDEX + 1))/4\\\"",
        "--max-cost 2.00",
        "secretRef:",
        "claimName: \"runner-out\"",
    ] {
        assert!(job.contains(part), "{part}: {job}");
    }
    let file = write(d, "job.yaml", &job);
    let checked = Command::new("kubernetes-validate")
        .arg("--strict")
        .arg(&file)
        .output()
        .expect("kubernetes-validate (scripts/install-test-deps installs it)");
    assert!(
        checked.status.success(),
        "{}{}",
        String::from_utf8_lossy(&checked.stdout),
        stderr(&checked)
    );
    let bad = plan(&["--format", "github"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("--shards N or --per-shard K"),
        "{}",
        stderr(&bad)
    );
}

/// `runner init --fleet` writes a workflow actionlint accepts (plan,
/// shards that push and open pull requests, a merge), a list and a task
/// that runs across the listed repositories as it is.
#[test]
fn init_fleet_writes_a_workflow_and_a_task_that_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let init = runner().args(["init", "--fleet"]).arg(d).output().unwrap();
    assert!(init.status.success(), "{}", stderr(&init));
    let workflow = d.join(".github/workflows/runner-fleet.yml");
    let text = std::fs::read_to_string(&workflow).unwrap();
    for part in [
        "runner plan --repos fleet/repos.txt",
        "--push \"$BRANCH\"",
        "gh pr create",
        "runner merge --out fleet-out",
        // No shell holding the secrets beside the runner.
        "exec runner run --repos",
        "--github-output \"$GITHUB_OUTPUT\"",
    ] {
        assert!(text.contains(part), "{part}");
    }
    crate::common::actionlint(&[&workflow]);
    // The example task across a local repository, as written.
    repository(&d.join("src/one"), "ok");
    write(
        d,
        "fleet/repos.txt",
        &format!("file://{}\n", d.join("src/one").display()),
    );
    let out = runner()
        .current_dir(d)
        .env("CI", "true")
        .args([
            "run",
            "--repos",
            "fleet/repos.txt",
            "--repos-cache",
            "cache",
            "--out",
            "out",
        ])
        .arg("tasks/fleet/example.yaml")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let again = runner().args(["init", "--fleet"]).arg(d).output().unwrap();
    assert!(
        stderr(&again).contains("skipped fleet/repos.txt: it exists"),
        "{}",
        stderr(&again)
    );
}

/// A SIGTERM in the middle of a fleet leaves every finished repository's
/// outputs whole, and `--resume` goes on with the rest (the finished one
/// kept as it was).
#[test]
fn a_fleet_cut_short_resumes_with_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut list = String::new();
    for name in ["a", "b", "c"] {
        repository(&d.join("src").join(name), "ok");
        list.push_str(&format!("file://{}\n", d.join("src").join(name).display()));
    }
    // a's task finishes at once (it has `fast`); b's waits for the flag.
    write(&d.join("src/a"), "fast", "");
    git(&d.join("src/a"), &["add", "fast"]);
    git(&d.join("src/a"), &["commit", "-qm", "fast"]);
    // A ref that is not there fails its repository alone.
    list.push_str(&format!(
        "file://{}@no-such-branch\n",
        d.join("src/a-twin").display()
    ));
    repository(&d.join("src/a-twin"), "ok");
    write(d, "repos.txt", &list);
    let flag = d.join("go-on");
    write(
        d,
        "tasks/wait.yaml",
        &format!(
            "name: wait\nprompt: Wait.\npolicy:\n  default: allow\nchecks:\n  - run: grep -qx ok status.txt\nscript:\n  - tool_calls:\n      - {{name: bash, args: {{command: \"[ -e fast ] || [ -e {} ] || sleep 31.25\", timeout: 120000}}}}\n  - text: Done.\n",
            flag.display()
        ),
    );
    let run = |extra: &[&str]| {
        let mut c = runner();
        c.current_dir(d)
            .env("CI", "true")
            .args([
                "run",
                "--repos",
                "repos.txt",
                "--repos-cache",
                "cache",
                "--jobs",
                "1",
            ])
            .args(extra)
            .arg("tasks/wait.yaml");
        c
    };
    let mut child = run(&["--out", "out"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    crate::common::sigterm_once_running(&child, &["sleep", "31.25"]);
    let status = child.wait().unwrap();
    // Not 75: the repository that cannot be fetched failed for good.
    assert_eq!(status.code(), Some(1), "{status:?}");
    let cut = by_wait(&d.join("out"));
    let statuses: Vec<&str> = cut.iter().map(|(_, s)| s.as_str()).collect();
    assert!(statuses.contains(&"cancelled"), "{cut:?}");
    let a = cut.iter().find(|(u, _)| u.ends_with("/src/a")).unwrap();
    assert_eq!(a.1, "passed", "{cut:?}");
    write(d, "go-on", "");
    let resumed = run(&["--resume", "out"]).output().unwrap();
    assert_eq!(resumed.status.code(), Some(1), "{}", stderr(&resumed));
    let done = by_wait(&d.join("out"));
    let passed = done.iter().filter(|(_, s)| s == "passed").count();
    assert_eq!(passed, 3, "{done:?}");
    let twin = done.iter().find(|(u, _)| u.ends_with("a-twin")).unwrap();
    assert_eq!(twin.1, "error", "{done:?}");
    let t = of(&transcripts(&d.join("out"), "wait"), "a-twin");
    assert!(
        t["outcome"]["reason"]
            .as_str()
            .unwrap()
            .contains("no-such-branch"),
        "{t}"
    );
}

/// (URL, outcome) of each `wait` task of an output folder.
fn by_wait(out: &Path) -> Vec<(String, String)> {
    transcripts(out, "wait")
        .into_iter()
        .map(|(u, t)| (u, t["outcome"]["status"].as_str().unwrap().to_string()))
        .collect()
}

/// A ref may be a commit: the tasks run on that commit, not the branch's
/// newer one.
#[test]
fn a_commit_ref_checks_out_that_commit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = d.join("src/one");
    let first = repository(&src, "ok");
    write(&src, "status.txt", "broken\n");
    git(&src, &["commit", "-qam", "broken"]);
    write(
        d,
        "repos.txt",
        &format!("file://{}@{first}\n", src.display()),
    );
    task(d);
    let out = fleet(d, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let t = &by_url(&d.join("out"))[0].1;
    assert_eq!(t["repository"]["commit"], first.as_str());
    assert_eq!(t["repository"]["git_ref"], first.as_str());
}
