//! junit.xml: one `<testsuite>` per task, named after it, carrying the
//! task's properties (model, turns, calls, denied calls, tokens), holding one
//! `<testcase>` with its failure, error or skip. Valid against the Jenkins
//! xUnit schema, which allows no properties inside a testcase.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

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
