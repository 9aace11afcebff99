//! The tree of child agents (issue 32) in report.html: a `<details>` per
//! child under the task, folded, with its profile, model, outcome, usage,
//! calls and its own children.

use std::fmt::Write;

use runner_output::{AgentRun, ToolCallRecord};

use super::text::{esc, signatures};

/// The children started by `calls`, nested; empty when there are none.
pub fn tree(calls: &[ToolCallRecord]) -> String {
    let kids: Vec<AgentRun> = calls.iter().filter_map(AgentRun::of).collect();
    if kids.is_empty() {
        return String::new();
    }
    let mut h = String::from("<ul class=\"agents\">\n");
    for a in &kids {
        let cost = a
            .usage
            .cost_usd
            .map_or_else(|| "cost unknown".to_string(), |c| format!("${c:.4}"));
        let _ = writeln!(
            h,
            "<li><details><summary><code>{}</code> ({}, {}) <span class=\"status {}\">{}</span> <span class=\"muted\">{} turn(s), {} call(s), {} denied, {cost}; {}</span></summary>",
            esc(&a.id),
            esc(&a.model),
            esc(&a.isolation),
            a.outcome.status.as_str(),
            a.outcome.status.as_str(),
            a.counts.turns,
            a.counts.tool_calls,
            a.counts.denied_calls,
            esc(&a.outcome.reason),
        );
        let _ = writeln!(
            h,
            "<p class=\"muted\">policies: {}; reserved {} turn(s){}</p>",
            esc(&a.policies.join(", ")),
            a.reserved.turns,
            a.reserved
                .cost_usd
                .map_or(String::new(), |c| format!(", ${c:.4}"))
        );
        if let Some(m) = &a.merge {
            let _ = writeln!(h, "<p>workspace: {}</p>", esc(m));
        }
        h.push_str("<ol class=\"agent-calls\">\n");
        for c in &a.tool_calls {
            let sig = signatures(c);
            let _ = writeln!(
                h,
                "<li class=\"{}\"><code>{}</code> {} <span class=\"muted\">{}</span></li>",
                if c.status == runner_output::CallStatus::Denied {
                    "denied"
                } else {
                    "call"
                },
                esc(&sig),
                c.status.as_str(),
                esc(&c.display)
            );
        }
        h.push_str("</ol>\n");
        if !a.final_answer.is_empty() {
            let _ = writeln!(h, "<pre class=\"answer\">{}</pre>", esc(&a.final_answer));
        }
        h.push_str(&tree(&a.tool_calls));
        h.push_str("</details></li>\n");
    }
    h.push_str("</ul>\n");
    h
}
