//! report.html: one self-contained page for people to open from a CI
//! artifact: an overview of the tasks, then per task its answer, checks,
//! denied calls, conversation and diff.
//!
//! Everything in it comes from model output and tool results, so
//! everything is escaped: the parts written here through [`esc`], the
//! conversation as JSON inside `<script type="application/json">` (with
//! `<`, `>` and `&` escaped, so nothing in it can close the element) and
//! put on the page by `report.js` through `textContent` only. A
//! Content-Security-Policy allows the page's own inline style and script
//! and nothing from the network. The conversation is rendered a page of
//! messages at a time, so a transcript of 10,000 calls opens at once.

mod agents;
mod fleet;
mod matrix;
mod repeats;
mod text;
use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;

use serde::Serialize;

use super::money::cost;
use super::summary::added_removed;
use super::transcript::{OutcomeStatus, Transcript};
use crate::contain::redact;
use crate::engine::{CallStatus, ToolCallRecord};
use crate::provider::Message;
pub use text::esc;
use text::signatures;

const STYLE: &str = include_str!("style.css");
const SCRIPT: &str = include_str!("report.js");

/// Characters of one text (an answer, a result, arguments) on the page;
/// the transcript has the rest.
const MAX_TEXT: usize = 4000;
/// Lines of one file's diff on the page; changes.diff has the rest.
const MAX_DIFF_LINES: usize = 2000;

/// `s` cut to [`MAX_TEXT`] characters, with a note, secrets redacted.
fn cut(s: &str) -> String {
    let s = &*redact(s);
    match s.char_indices().nth(MAX_TEXT) {
        None => s.to_string(),
        Some((i, _)) => format!(
            "{}\n[... {} more characters in transcript.json]",
            &s[..i],
            s.len() - i
        ),
    }
}

/// JSON that is safe inside a `<script>` element.
fn script_json<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v)
        .unwrap_or_else(|_| "[]".into())
        .replace('&', "\\u0026")
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// One message of the conversation as the page shows it.
#[derive(Serialize)]
struct PageMessage {
    role: &'static str,
    text: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    calls: Vec<PageCall>,
}

#[derive(Serialize)]
struct PageCall {
    tool: String,
    args: String,
    /// Null for a call that never ran (the run was cut short).
    status: Option<CallStatus>,
    rule: Option<String>,
    policy: Option<String>,
    reason: Option<String>,
    content: String,
}

/// The conversation from the transcript's messages, each call joined
/// with its record (by id, in order: ids may repeat across attempts).
fn conversation(t: &Transcript) -> Vec<PageMessage> {
    let mut records: HashMap<&str, VecDeque<&ToolCallRecord>> = HashMap::new();
    for r in &t.tool_calls {
        records.entry(r.id.as_str()).or_default().push_back(r);
    }
    let mut out = Vec::new();
    for m in &t.messages {
        match m {
            Message::User { content } => out.push(PageMessage {
                role: "user",
                text: cut(content),
                calls: vec![],
            }),
            Message::Assistant {
                text, tool_calls, ..
            } => {
                let calls = tool_calls
                    .iter()
                    .map(|c| {
                        let rec = records.get_mut(c.id.as_str()).and_then(VecDeque::pop_front);
                        let args = c
                            .arguments
                            .as_ref()
                            .map(|a| a.to_string())
                            .or_else(|| c.invalid_arguments.clone())
                            .unwrap_or_default();
                        let d = rec.and_then(|r| r.decision.as_deref());
                        PageCall {
                            tool: c.name.clone(),
                            args: cut(&args),
                            status: rec.map(|r| r.status),
                            rule: d.and_then(|d| d.rule.clone()),
                            policy: d.and_then(|d| d.policy.clone()),
                            reason: d
                                .filter(|_| rec.is_some_and(|r| r.status == CallStatus::Denied))
                                .and_then(|d| d.reason.clone()),
                            content: rec.map(|r| cut(&r.content)).unwrap_or_default(),
                        }
                    })
                    .collect();
                out.push(PageMessage {
                    role: "assistant",
                    text: cut(text),
                    calls,
                });
            }
            // Results are shown with their calls.
            Message::Tool { .. } => {}
        }
    }
    out
}

fn duration(ms: u64) -> String {
    if ms >= 60_000 {
        format!("{}m {}s", ms / 60_000, (ms % 60_000) / 1000)
    } else {
        format!("{:.1}s", ms as f64 / 1000.0)
    }
}

/// The diff, a `<details>` per file, lines coloured.
fn diff_html(diff: &str) -> String {
    let mut files: Vec<(String, Vec<&str>)> = Vec::new();
    for line in diff.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let name = rest.rsplit(" b/").next().unwrap_or(rest).to_string();
            files.push((name, vec![line]));
        } else if let Some((_, lines)) = files.last_mut() {
            lines.push(line);
        } else {
            files.push((String::new(), vec![line]));
        }
    }
    let mut h = String::new();
    for (name, lines) in files {
        let (added, removed) = added_removed(lines.iter().copied());
        let _ = write!(
            h,
            "<details open><summary><code>{}</code> <span class=\"muted\">+{added} -{removed}</span></summary><pre class=\"diff\">",
            esc(&name)
        );
        for l in lines.iter().take(MAX_DIFF_LINES) {
            let class = if l.starts_with("+++") || l.starts_with("---") || l.starts_with("diff ") {
                "meta"
            } else if l.starts_with('+') {
                "add"
            } else if l.starts_with('-') {
                "del"
            } else if l.starts_with("@@") {
                "hunk"
            } else {
                ""
            };
            if class.is_empty() {
                let _ = writeln!(h, "{}", esc(l));
            } else {
                let _ = write!(h, "<span class=\"{class}\">{}</span>", esc(l));
            }
        }
        if lines.len() > MAX_DIFF_LINES {
            let _ = write!(
                h,
                "<span class=\"meta\">[{} more lines in changes.diff]</span>",
                lines.len() - MAX_DIFF_LINES
            );
        }
        h.push_str("</pre></details>\n");
    }
    h
}

/// What happened between the runner and the model, when anything did:
/// resumptions, switches to fallback models, retried requests and what a
/// server's refusals taught the runner.
fn model_html(t: &Transcript) -> String {
    let mut items: Vec<String> = Vec::new();
    if t.resumes > 0 {
        items.push(format!(
            "resumed {} time(s) (<code>--resume</code>): the turns, calls and cost include the earlier runs'",
            t.resumes
        ));
    }
    for s in &t.model_switches {
        items.push(format!(
            "turn {}: <code>{}</code> failed (<code>{}</code>); went on with <code>{}</code>",
            s.turn,
            esc(&s.from),
            s.class.as_str(),
            esc(&s.to)
        ));
    }
    for turn in &t.turns {
        if turn.retries.is_empty() {
            continue;
        }
        let tries: Vec<String> = turn
            .retries
            .iter()
            .map(|r| {
                format!(
                    "{} ({})",
                    esc(&r.error),
                    r.class.map_or("unknown", |c| c.as_str())
                )
            })
            .collect();
        items.push(format!(
            "turn {}: {} retried request(s): {}",
            turn.turn,
            turn.retries.len(),
            tries.join("; ")
        ));
    }
    items.extend(t.server_adaptations.iter().map(|a| esc(a)));
    if items.is_empty() {
        return String::new();
    }
    let mut h = String::from("<h3>The model</h3><ul class=\"model-events\">\n");
    for i in items.iter().take(200) {
        let _ = writeln!(h, "<li>{i}</li>");
    }
    if items.len() > 200 {
        let _ = writeln!(h, "<li>... and {} more</li>", items.len() - 200);
    }
    h.push_str("</ul>\n");
    h
}

fn task_html(i: usize, t: &Transcript, diff: &str) -> String {
    let mut h = String::new();
    let status = t.outcome.status.as_str();
    let _ = write!(
        h,
        "<section class=\"task\" id=\"task-{i}\"><h2>{} <span class=\"badge {status}\">{status}</span></h2>\n<p>{}</p>\n<p class=\"muted\">{} · {} · policies: {}</p>\n",
        esc(&t.task),
        esc(&t.outcome.reason),
        esc(&t.model),
        esc(&t.task_file),
        esc(&t.policies.join(", "))
    );
    h.push_str(&model_html(t));
    if !t.final_answer.is_empty() {
        let _ = writeln!(
            h,
            "<h3>Final answer</h3><pre class=\"answer\">{}</pre>",
            esc(&cut(&t.final_answer))
        );
    }
    if !t.checks.is_empty() {
        h.push_str("<h3>Checks</h3>\n");
        for c in &t.checks {
            let verdict = if c.passed { "passed" } else { "failed" };
            let _ = writeln!(
                h,
                "<details{}><summary>{} <span class=\"badge {verdict}\">{verdict}</span> <span class=\"muted\">attempt {} · {}</span></summary><pre>{}</pre><pre>{}</pre></details>",
                if c.passed { "" } else { " open" },
                esc(&c.name),
                c.attempt,
                duration(c.duration_ms),
                esc(&c.command),
                esc(&cut(&c.output))
            );
        }
    }
    let denied: Vec<&ToolCallRecord> = t
        .tool_calls
        .iter()
        .filter(|c| c.status == CallStatus::Denied)
        .collect();
    if !denied.is_empty() {
        let _ = writeln!(
            h,
            "<h3>Denied calls ({})</h3><ul class=\"denied-calls\">",
            denied.len()
        );
        for c in denied.iter().take(500) {
            let d = c.decision.as_deref();
            let sigs = signatures(c);
            let rule = d
                .and_then(|d| d.rule.clone())
                .unwrap_or_else(|| "refused before the policy".into());
            let policy = d.and_then(|d| d.policy.clone()).unwrap_or_default();
            let _ = writeln!(
                h,
                "<li class=\"denied\">turn {}: <code>{}</code> by <code class=\"rule\">{}</code> <span class=\"muted\">{}</span></li>",
                c.turn,
                esc(&sigs),
                esc(&rule),
                esc(&policy)
            );
        }
        if denied.len() > 500 {
            let _ = writeln!(h, "<li>... and {} more</li>", denied.len() - 500);
        }
        let _ = writeln!(h, "</ul>");
    }
    let by_sandbox = t.sandbox_refusals();
    if !by_sandbox.is_empty() {
        let _ = writeln!(
            h,
            "<h3>Refused by the sandbox ({})</h3><ul class=\"denied-calls\">",
            by_sandbox.len()
        );
        for (turn, r) in by_sandbox.iter().take(500) {
            let _ = writeln!(h, "<li class=\"denied\">turn {turn}: {}</li>", esc(r));
        }
        h.push_str("</ul>\n");
    }
    let shadow = crate::report::shadow::changes(t);
    if !shadow.is_empty() {
        let _ = writeln!(
            h,
            "<h3>The shadow policy would change ({})</h3><ul class=\"shadow\">",
            shadow.len()
        );
        for (k, line) in shadow.iter().take(500) {
            let _ = writeln!(h, "<li>{}: {}</li>", k.as_str(), esc(line));
        }
        h.push_str("</ul>\n");
    }
    let children = agents::tree(&t.tool_calls);
    if !children.is_empty() {
        h.push_str("<h3>Child agents</h3>\n");
        h.push_str(&children);
    }
    let refused: Vec<_> = t.connections.iter().filter(|c| !c.allowed).collect();
    if !refused.is_empty() {
        let _ = writeln!(
            h,
            "<h3>Connections refused ({})</h3><ul class=\"denied-connections\">",
            refused.len()
        );
        for c in refused.iter().take(500) {
            let _ = writeln!(
                h,
                "<li class=\"denied\">{}: <code>{}:{}</code> by <code class=\"rule\">{}</code> <span class=\"muted\">{}</span></li>",
                c.via.as_str(),
                esc(&c.host),
                c.port,
                esc(c.rule.as_deref().unwrap_or("no rule")),
                esc(&c.reason)
            );
        }
        h.push_str("</ul>\n");
    }
    if !t.violations.is_empty() {
        let _ = writeln!(
            h,
            "<h3>Changes dropped ({})</h3><p class=\"muted\">The policy denies editing these paths; the changes were reverted in the copy and are not in the diff.</p><ul class=\"violations\">",
            t.violations.len()
        );
        for v in t.violations.iter().take(500) {
            let _ = writeln!(
                h,
                "<li class=\"denied\"><code>{}</code> ({}) by <code class=\"rule\">{}</code> <span class=\"muted\">{}</span></li>",
                esc(&v.path),
                v.change.as_str(),
                esc(&v.rule),
                esc(&v.policy)
            );
        }
        if t.violations.len() > 500 {
            let _ = writeln!(h, "<li>... and {} more</li>", t.violations.len() - 500);
        }
        h.push_str("</ul>\n");
    }
    if let Some(cut) = &t.diff_cut {
        let _ = writeln!(
            h,
            "<p class=\"muted\">{}</p>",
            esc(&super::summary::diff_cut_note(cut))
        );
    }
    let conv = conversation(t);
    let _ = write!(
        h,
        "<h3>Conversation ({} messages, {} calls)</h3>\n<script type=\"application/json\" id=\"conv-{i}\">{}</script>\n<div class=\"conversation\" data-src=\"conv-{i}\"></div>\n",
        conv.len(),
        t.tool_calls.len(),
        script_json(&conv)
    );
    let _ = writeln!(h, "<h3>Changes ({} files)</h3>", t.changes.len());
    if diff.is_empty() {
        h.push_str("<p class=\"muted\">No changes.</p>\n");
    } else {
        h.push_str(&diff_html(diff));
    }
    h.push_str("</section>\n");
    h
}

/// The page for a run's tasks, each with its diff (`changes.diff`).
pub fn render(tasks: &[(&Transcript, &str)]) -> String {
    let passed = tasks
        .iter()
        .filter(|(t, _)| t.outcome.status == OutcomeStatus::Passed)
        .count();
    let mut h = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>runner: {passed}/{} tasks passed</title>\n<style>{STYLE}</style></head><body>\n<h1>runner: {passed}/{} tasks passed</h1>\n",
        tasks.len(),
        tasks.len()
    );
    h.push_str(&fleet::repositories(tasks));
    h.push_str(&matrix::pivot(tasks));
    h.push_str(&repeats::table(tasks));
    let unstarted = tasks
        .iter()
        .filter(|(t, _)| crate::report::skipped_by_budget(t))
        .count();
    if unstarted > 0 {
        let _ = writeln!(
            h,
            "<p class=\"muted\">⏭ {unstarted} of {} runs not started: the run's <code>--max-cost</code> was spent.</p>",
            tasks.len()
        );
    }
    h.push_str("<table class=\"overview\"><thead><tr><th>task</th><th>outcome</th><th>turns</th><th>calls</th><th>denied</th><th>changed files</th><th>tokens</th><th>cost</th><th>duration</th></tr></thead><tbody>\n");
    for (i, (t, _)) in tasks.iter().enumerate() {
        let status = t.outcome.status.as_str();
        let _ = writeln!(
            h,
            "<tr><td><a href=\"#task-{i}\">{}</a></td><td><span class=\"badge {status}\">{status}</span></td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&t.task),
            t.counts.turns,
            t.counts.tool_calls,
            t.counts.denied_calls,
            t.changes.len(),
            t.usage.total(),
            esc(&cost(t.usage.cost_usd)),
            duration(t.duration_ms)
        );
    }
    h.push_str("</tbody></table>\n");
    for (i, (t, diff)) in tasks.iter().enumerate() {
        h.push_str(&task_html(i, t, diff));
    }
    let _ = write!(h, "<script>{SCRIPT}</script>\n</body></html>\n");
    h
}
