//! junit.xml: one `<testsuite>` per task (a repeated task's attempts as
//! one), named after it, carrying the
//! task's properties (model, turns, calls, denied calls, tokens), holding one
//! `<testcase>` with its failure, error or skip. Valid against the Jenkins
//! xUnit schema, which allows no properties inside a testcase.

use std::time::Duration;

use quick_junit::{
    FlakyOrRerun, NonSuccessKind, NonSuccessReruns, Property, Report, TestCase, TestCaseStatus,
    TestRerun, TestSuite,
};

use super::repeats::{Repeated, pass_at};
use super::repositories::Group;
use super::transcript::{OutcomeStatus, Transcript};

/// Renders the report of a run: a suite per task, or for a fleet run
/// (`--repos`) a suite per repository with a case per task.
pub fn render(transcripts: &[(&Transcript, String)]) -> String {
    let mut report = Report::new("runner");
    let total: Duration = transcripts
        .iter()
        .map(|(t, _)| Duration::from_millis(t.duration_ms))
        .sum();
    let ts: Vec<&Transcript> = transcripts.iter().map(|(t, _)| *t).collect();
    if let Some(groups) = super::repeats::group(&ts) {
        for g in &groups {
            report.add_test_suite(repeated_suite(g, transcripts));
        }
        report.set_time(total);
        return strip_testsuites_skipped(&report.to_string().unwrap_or_default());
    }
    match super::repositories::group(&ts) {
        Some(groups) => {
            for g in groups {
                report.add_test_suite(repository_suite(&g, transcripts));
            }
        }
        None => {
            for (t, transcript_path) in transcripts {
                let mut suite = TestSuite::new(t.task.clone());
                suite.set_time(Duration::from_millis(t.duration_ms));
                for (k, v) in properties(t) {
                    suite.add_property(Property::new(k, v));
                }
                suite.add_test_case(case_of(t, transcript_path, &t.task));
                report.add_test_suite(suite);
            }
        }
    }
    report.set_time(total);
    strip_testsuites_skipped(&report.to_string().unwrap_or_default())
}

/// A repository's suite: its URL, ref and commit, how many of its tasks
/// passed, what they changed and cost; a case per task.
fn repository_suite(g: &Group, transcripts: &[(&Transcript, String)]) -> TestSuite {
    let folder = &g.repo.folder;
    let mut suite = TestSuite::new(folder.clone());
    let props = [
        ("repository", g.repo.url.clone()),
        ("ref", g.repo.git_ref.clone().unwrap_or_default()),
        ("commit", g.repo.commit.clone().unwrap_or_default()),
        ("tasks", g.tasks.len().to_string()),
        ("passed", g.passed.to_string()),
        ("changed_files", g.changed.to_string()),
        (
            "cost_usd",
            g.cost
                .map_or_else(|| "unknown".into(), |c| format!("{c:.6}")),
        ),
    ];
    for (k, v) in props {
        suite.add_property(Property::new(k, v));
    }
    let mut time = Duration::ZERO;
    for &i in &g.tasks {
        let (t, path) = &transcripts[i];
        time += Duration::from_millis(t.duration_ms);
        let name = t
            .task
            .strip_prefix(&format!("{folder}/"))
            .unwrap_or(&t.task);
        suite.add_test_case(case_of(t, path, name));
    }
    suite.set_time(time);
    suite
}

/// A task's case, named `name`: its outcome, answer, refused connections
/// and where its transcript is.
fn case_of(t: &Transcript, transcript_path: &str, name: &str) -> TestCase {
    let time = Duration::from_millis(t.duration_ms);
    let status = match t.outcome.status {
        OutcomeStatus::Passed => TestCaseStatus::success(),
        OutcomeStatus::Failed | OutcomeStatus::Conflict | OutcomeStatus::Timeout => {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_message(t.outcome.reason.clone())
                .set_type(t.outcome.status.as_str());
            s
        }
        OutcomeStatus::Error => {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
            // A provider's failure says its class (`rate_limited` ...).
            s.set_message(t.outcome.reason.clone())
                .set_type(t.outcome.error_class.map_or("error", |c| c.as_str()));
            s
        }
        OutcomeStatus::Cancelled | OutcomeStatus::Skipped => {
            let mut s = TestCaseStatus::skipped();
            s.set_message(format!(
                "{}: {}",
                t.outcome.status.as_str(),
                t.outcome.reason
            ));
            s
        }
    };
    let mut case = TestCase::new(name.to_string(), status);
    case.set_classname(t.task_file.clone()).set_time(time);
    let mut out = String::new();
    if !t.final_answer.is_empty() {
        out.push_str(&format!("Final answer:\n{}\n\n", t.final_answer));
    }
    let refused: Vec<_> = t.connections.iter().filter(|c| !c.allowed).collect();
    if !refused.is_empty() {
        out.push_str(&format!("Connections refused ({}):\n", refused.len()));
        for c in refused.iter().take(50) {
            out.push_str(&format!(
                "- {}: {}:{} by {}: {}\n",
                c.via.as_str(),
                c.host,
                c.port,
                c.rule.as_deref().unwrap_or("no rule"),
                c.reason
            ));
        }
        out.push('\n');
    }
    out.push_str(&format!("Transcript: {transcript_path}\n"));
    case.set_system_out(out);
    case
}

/// A task's suite properties.
fn properties(t: &Transcript) -> Vec<(&'static str, String)> {
    let mut props = vec![
        ("model", t.model.clone()),
        ("outcome", t.outcome.status.as_str().to_string()),
        ("attempts", t.counts.attempts.to_string()),
        ("turns", t.counts.turns.to_string()),
        ("tool_calls", t.counts.tool_calls.to_string()),
        ("denied_calls", t.counts.denied_calls.to_string()),
        (
            "denied_connections",
            t.counts.denied_connections.to_string(),
        ),
        ("violations", t.violations.len().to_string()),
        ("failed_calls", t.counts.failed_calls.to_string()),
        ("input_tokens", t.usage.input_tokens.to_string()),
        ("output_tokens", t.usage.output_tokens.to_string()),
        (
            "cached_input_tokens",
            t.usage.cached_input_tokens.to_string(),
        ),
        (
            "cache_write_input_tokens",
            t.usage.cache_write_input_tokens.to_string(),
        ),
        (
            "cost_usd",
            t.usage
                .cost_usd
                .map_or_else(|| "unknown".into(), |c| format!("{c:.6}")),
        ),
        ("changed_files", t.changes.len().to_string()),
    ];
    // With a shadow policy (`--shadow-policy`): the calls it would change.
    if t.tool_calls.iter().any(|c| c.shadow.is_some()) {
        props.push((
            "shadow_newly_denied",
            t.counts.shadow_newly_denied.to_string(),
        ));
        props.push((
            "shadow_newly_allowed",
            t.counts.shadow_newly_allowed.to_string(),
        ));
    }
    props
}

// A task run with `--repeat`: a `<testsuite>` with its pass rate, pass@k
// and flakiness as properties, holding one `<testcase>`: passed when an
// attempt passed, its failed attempts as `<flakyFailure>` elements (the
// surefire way, as nextest writes retries); failed when none did, the
// others as `<rerunFailure>`.

/// A failed attempt as a rerun element.
fn rerun(t: &Transcript) -> TestRerun {
    let kind = if t.outcome.status == OutcomeStatus::Error {
        NonSuccessKind::Error
    } else {
        NonSuccessKind::Failure
    };
    let mut r = TestRerun::new(kind);
    // No `time`: the Jenkins xUnit schema allows none on a rerun.
    r.set_message(format!("{}: {}", t.task, t.outcome.reason))
        .set_type(t.outcome.status.as_str());
    r
}

/// Task `g`'s suite; `transcripts` gives each attempt's transcript path.
fn repeated_suite(g: &Repeated, transcripts: &[(&Transcript, String)]) -> TestSuite {
    let (n, c) = (g.runs(), g.passed());
    let mut suite = TestSuite::new(g.task.clone());
    let time: Duration = g
        .attempts
        .iter()
        .map(|t| Duration::from_millis(t.duration_ms))
        .sum();
    suite.set_time(time);
    let mut props: Vec<(String, String)> = vec![
        ("attempts", n.to_string()),
        ("passed", c.to_string()),
        ("pass_rate", format!("{:.4}", g.pass_rate())),
        ("flaky", g.flaky().to_string()),
        ("median_turns", format!("{:.1}", g.median_turns())),
        (
            "median_cost_usd",
            g.median_cost()
                .map_or_else(|| "unknown".into(), |x| format!("{x:.6}")),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    for k in 1..=n {
        props.push((format!("pass_at_{k}"), format!("{:.4}", pass_at(n, c, k))));
    }
    for (k, v) in props {
        suite.add_property(Property::new(k, v));
    }
    let path = |t: &Transcript| {
        transcripts
            .iter()
            .find(|(x, _)| std::ptr::eq(*x, t))
            .map_or(String::new(), |(_, p)| p.clone())
    };
    let failed: Vec<&&Transcript> = g
        .attempts
        .iter()
        .filter(|t| t.outcome.status != OutcomeStatus::Passed)
        .collect();
    let shown = g
        .attempts
        .iter()
        .find(|t| t.outcome.status == OutcomeStatus::Passed)
        .or(g.attempts.last())
        .copied()
        .expect("a repeated task has attempts");
    let mut case = case_of(shown, &path(shown), &g.task);
    let status = if c > 0 {
        TestCaseStatus::Success {
            flaky_runs: failed.iter().map(|t| rerun(t)).collect(),
        }
    } else {
        let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
        s.set_message(format!(
            "no attempt of {n} passed; the last: {}",
            shown.outcome.reason
        ))
        .set_type(shown.outcome.status.as_str());
        if let TestCaseStatus::NonSuccess { reruns, .. } = &mut s {
            *reruns = NonSuccessReruns {
                kind: FlakyOrRerun::Rerun,
                runs: failed
                    .iter()
                    .take(failed.len() - 1)
                    .map(|t| rerun(t))
                    .collect(),
            };
        }
        s
    };
    case.status = status;
    suite.add_test_case(case);
    suite
}

/// The Jenkins xUnit schema allows no `skipped` attribute on
/// `<testsuites>` (it does on `<testsuite>`); quick-junit always writes it.
fn strip_testsuites_skipped(xml: &str) -> String {
    let Some(start) = xml.find("<testsuites") else {
        return xml.to_string();
    };
    let end = start + xml[start..].find('>').unwrap_or(0);
    let tag = &xml[start..end];
    let cleaned = match tag.find(" skipped=\"") {
        Some(i) => {
            let close = tag[i + 10..]
                .find('"')
                .map_or(tag.len(), |j| i + 10 + j + 1);
            format!("{}{}", &tag[..i], &tag[close..])
        }
        None => tag.to_string(),
    };
    format!("{}{}{}", &xml[..start], cleaned, &xml[end..])
}
