//! A live line per running task in a terminal (indicatif): its elapsed
//! time, turn and current tool. Denials and outcomes are printed above the
//! lines so they stay in the scrollback. Used only when stderr is a
//! terminal and `CI` is not set; CI logs get [`super::progress::PlainLines`].

use crate::contain::redact;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::progress::{RunReporter, call_line, event_line};
use super::transcript::Transcript;
use crate::engine::{CallStatus, Event};

pub struct Bars {
    multi: MultiProgress,
    bars: Mutex<HashMap<String, ProgressBar>>,
    verbose: bool,
}

impl Bars {
    pub fn new(verbose: bool) -> Self {
        Self {
            multi: MultiProgress::with_draw_target(ProgressDrawTarget::stderr()),
            bars: Mutex::new(HashMap::new()),
            verbose,
        }
    }

    fn with_bar(&self, task: &str, f: impl FnOnce(&ProgressBar)) {
        if let Some(b) = self
            .bars
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(task)
        {
            f(b);
        }
    }
}

impl RunReporter for Bars {
    fn task_started(&self, task: &str) {
        let style =
            ProgressStyle::with_template("{spinner} {prefix:.bold} {elapsed:>4} {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
        let bar = self.multi.add(ProgressBar::new_spinner());
        bar.set_style(style);
        bar.set_prefix(task.to_string());
        bar.set_message("starting");
        bar.enable_steady_tick(Duration::from_millis(120));
        self.bars
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(task.to_string(), bar);
    }

    fn event(&self, task: &str, event: &Event) {
        match event {
            Event::TurnStarted { turn } => self.with_bar(task, |b| {
                b.set_message(format!("turn {turn}: waiting for the model"))
            }),
            Event::ToolStarted { call } => self.with_bar(task, |b| {
                b.set_message(format!("turn {}: {}", call.turn, call.tool))
            }),
            Event::ToolFinished { record } if record.status == CallStatus::Denied => {
                let _ = self
                    .multi
                    .println(redact(&format!("[{task}] {}", call_line(record))));
            }
            other => {
                if self.verbose
                    && let Some(line) = event_line(other, true)
                {
                    let _ = self.multi.println(redact(&format!("[{task}] {line}")));
                }
            }
        }
    }

    fn task_finished(&self, t: &Transcript) {
        let (task, outcome) = (t.task.as_str(), &t.outcome);
        let bar = self
            .bars
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(task);
        if let Some(b) = bar {
            b.finish_and_clear();
            self.multi.remove(&b);
        }
        let _ = self.multi.println(redact(&format!(
            "[{task}] {}: {}",
            outcome.status.as_str(),
            outcome.reason
        )));
    }
}
