//! Reading a journal back: the transcript of a task cut short at its last
//! whole line, and its diff then.

use std::path::Path;

use super::{JOURNAL, Line, Start, VERSION};
use crate::report::transcript::Counts;
use crate::report::{Outcome, OutcomeStatus, Transcript};

/// Task folder `dir`'s journal as a transcript of a task cut short
/// (`cancelled`, at its last durable turn) and its diff; `None` when there
/// is no journal, when it does not begin with a whole `start` of this
/// version, or when a transcript was written after it (the task ended).
pub fn read(dir: &Path) -> Option<(Transcript, String)> {
    let path = dir.join(JOURNAL);
    let journaled = std::fs::metadata(&path).ok()?.modified().ok()?;
    if let Ok(written) = std::fs::metadata(dir.join("transcript.json")).and_then(|m| m.modified())
        && written >= journaled
    {
        return None;
    }
    let bytes = std::fs::read(&path).ok()?;
    let mut lines = bytes.split_inclusive(|b| *b == b'\n');
    let Some(Line::Start(start)) = lines.next().and_then(parse) else {
        tracing::warn!(
            "{}: no whole start line; not resumed from it",
            path.display()
        );
        return None;
    };
    let Start {
        version,
        mut base,
        mut diff,
    } = *start;
    if version != VERSION {
        tracing::warn!(
            "{}: journal version {version}, not {VERSION}; not resumed from it",
            path.display()
        );
        return None;
    }
    let before_ms = base.duration_ms;
    let mut attempts = base.counts.attempts;
    let mut last = None;
    for raw in lines {
        let Some(line) = parse(raw) else {
            // A record the kill cut short: dropped, with what follows.
            tracing::warn!("{}: a torn last record is dropped", path.display());
            break;
        };
        match line {
            Line::Start(_) => break,
            Line::Checks(checks) => base.checks = checks,
            Line::Batch(b) => base.pending_batch = Some(b),
            Line::Turn(t) => {
                base.messages.extend(t.messages);
                base.turns.extend(t.recent.turns);
                base.tool_calls.extend(t.recent.tool_calls);
                base.compactions.extend(t.recent.compactions);
                base.model_switches.extend(t.recent.model_switches);
                base.connections.extend(t.recent.connections);
                base.usage = t.usage;
                base.duration_ms = before_ms + t.elapsed_ms;
                attempts = t.attempts;
                if let Some(d) = t.diff {
                    diff = d;
                }
                // A batch asked with fewer messages was answered: this
                // turn holds its answer. (One asked for the next turn may
                // be written before this line.)
                if base
                    .pending_batch
                    .as_ref()
                    .is_some_and(|b| b.messages < base.messages.len())
                {
                    base.pending_batch = None;
                }
                last = Some(t.turn);
            }
        }
    }
    base.counts = Counts::from(attempts, &base.turns, &base.tool_calls);
    base.outcome = Outcome {
        status: OutcomeStatus::Cancelled,
        reason: match last {
            Some(turn) => format!(
                "the run was killed; its journal ends after turn {turn}, where the task goes on"
            ),
            None => "the run was killed before its first turn ended".into(),
        },
        error_class: None,
        tripwire: None,
    };
    Some((base, diff))
}

/// One whole line (its newline included); `None` for a torn one.
fn parse(raw: &[u8]) -> Option<Line> {
    serde_json::from_slice(raw.strip_suffix(b"\n")?).ok()
}

#[cfg(test)]
mod tests {
    use super::super::{RecentRecords, TurnLine, encode};
    use super::*;

    fn base() -> Transcript {
        serde_json::from_value(serde_json::json!({
            "version": 1, "task": "t", "task_file": "t.yaml", "model": "scripted",
            "workspace": "/w", "mode": "edit", "started_at": "2026-11-26T10:00:00Z",
            "duration_ms": 5, "policies": [], "system_prompt": "s",
            "messages": [{"role": "user", "content": "go"}],
            "turns": [], "checks": [], "tool_calls": [],
            "usage": {"input_tokens": 0, "output_tokens": 0},
            "counts": {"attempts": 1, "turns": 0, "tool_calls": 0, "denied_calls": 0, "failed_calls": 0},
            "changes": [], "final_answer": "",
            "outcome": {"status": "cancelled", "reason": ""}
        }))
        .unwrap()
    }

    fn turn(n: u32, text: &str, diff: Option<&str>) -> Line {
        Line::Turn(Box::new(TurnLine {
            turn: n,
            elapsed_ms: 10 * u64::from(n),
            attempts: 1,
            messages: vec![crate::provider::Message::User {
                content: text.into(),
            }],
            recent: RecentRecords::default(),
            diff: diff.map(str::to_string),
            ..TurnLine::default()
        }))
    }

    fn journal(dir: &Path, lines: &[Line], tail: &str) {
        let mut text = String::new();
        for l in lines {
            text.push_str(&encode(l).unwrap());
        }
        text.push_str(tail);
        std::fs::write(dir.join(JOURNAL), text).unwrap();
    }

    fn start(version: u32) -> Line {
        Line::Start(Box::new(Start {
            version,
            base: base(),
            diff: "d0".into(),
        }))
    }

    #[test]
    fn lines_fold_up_to_the_first_torn_one() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert!(read(d).is_none());
        let whole = [
            start(VERSION),
            turn(1, "one", Some("d1")),
            turn(2, "two", None),
        ];
        journal(d, &whole, "");
        let (t, diff) = read(d).unwrap();
        assert_eq!(t.messages.len(), 3);
        assert_eq!(diff, "d1", "a turn with no diff keeps the last");
        assert_eq!(t.duration_ms, 5 + 20);
        assert_eq!(t.outcome.status, OutcomeStatus::Cancelled);
        assert!(
            t.outcome.reason.contains("after turn 2"),
            "{}",
            t.outcome.reason
        );
        // A whole record without its newline, and a torn one: dropped.
        let cut = encode(&turn(3, "three", Some("d3"))).unwrap();
        journal(d, &whole, cut.trim_end());
        assert_eq!(read(d).unwrap().0.messages.len(), 3);
        journal(d, &whole, &cut[..cut.len() / 2]);
        assert_eq!(read(d).unwrap().1, "d1");
        // Nothing after a bad line counts, even whole lines.
        journal(d, &whole[..2], &format!("{{\"turn\":\n{cut}"));
        assert_eq!(read(d).unwrap().0.messages.len(), 2);
    }

    fn batch(messages: usize) -> Line {
        Line::Batch(runner_output::PendingBatch {
            vendor: "anthropic".into(),
            id: format!("msgbatch_{messages}"),
            custom_id: "runner-1".into(),
            messages,
        })
    }

    /// The batch a task waits on is the last one whose request the
    /// journal's turns have not answered, whatever the lines' order.
    #[test]
    fn a_pending_batch_is_kept_until_a_turn_answers_it() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        // Asked with the start's one message, answered by turn 1.
        journal(d, &[start(VERSION), batch(1), turn(1, "one", None)], "");
        assert_eq!(read(d).unwrap().0.pending_batch, None);
        // The next turn's batch, written before turn 1's line.
        journal(
            d,
            &[start(VERSION), batch(1), batch(2), turn(1, "one", None)],
            "",
        );
        let pending = read(d).unwrap().0.pending_batch.unwrap();
        assert_eq!(pending.id, "msgbatch_2");
        journal(d, &[start(VERSION), batch(1)], "");
        assert_eq!(read(d).unwrap().0.pending_batch.unwrap().messages, 1);
    }

    #[test]
    fn another_version_a_torn_start_or_a_later_transcript_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        journal(d, &[start(VERSION + 1), turn(1, "one", None)], "");
        assert!(read(d).is_none());
        let start_line = encode(&start(VERSION)).unwrap();
        journal(d, &[], &start_line[..start_line.len() - 2]);
        assert!(read(d).is_none());
        journal(d, &[start(VERSION)], "");
        assert!(read(d).is_some());
        // The transcript written after the journal is the task's word.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(d.join("transcript.json"), "{}").unwrap();
        assert!(read(d).is_none());
    }
}
