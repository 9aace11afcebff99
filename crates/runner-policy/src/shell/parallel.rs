//! `parallel`, looked into as `xargs` is (see `programs::parallel`): the
//! command it hands a shell is analysed as a script, once for each value
//! given after `:::` (at most [`MAX_VALUES`]); values read when the script
//! runs (stdin, `::::` files) are like `xargs`'s words: a reader given a
//! known producer's paths reads beneath where they lie, anything else
//! that takes files fails closed.

use super::state::Walker;
use crate::programs;
use crate::words::base_name;

/// Values after `:::` analysed one by one; more fail closed.
const MAX_VALUES: usize = 64;

impl Walker {
    pub(super) fn unwrap_parallel(&mut self, args: &[String], heredoc: bool, level: usize) {
        let call = match programs::parallel_call(args) {
            Ok(c) => c,
            Err(why) => {
                self.opaque(why.to_string());
                return;
            }
        };
        for f in &call.arg_files {
            self.add_path(false, f, false);
        }
        for (f, tree) in &call.writes {
            self.add_path(true, f, *tree);
        }
        if call.command.is_empty() {
            self.opaque("`parallel` without a command runs the lines it reads as commands");
            return;
        }
        let replaces = |w: &str| match &call.replace {
            Some(r) => w.contains(r.as_str()),
            None => programs::is_parallel_replacement(w),
        };
        if call.values.len() > MAX_VALUES {
            self.opaque(format!(
                "`parallel` runs its command for more than {MAX_VALUES} values"
            ));
            return;
        }
        if !call.reads_stdin() && call.arg_files.is_empty() {
            // Each value in place of the replacement strings, or appended.
            for v in &call.values {
                let mut words: Vec<String> = call
                    .command
                    .iter()
                    .map(|w| if replaces(w) { v.clone() } else { w.clone() })
                    .collect();
                if !call.command.iter().any(|w| replaces(w)) {
                    words.push(v.clone());
                }
                self.parallel_runs(&words, call.quoted, heredoc, level);
            }
            return;
        }
        // Values only known when the script runs.
        let words: Vec<String> = call
            .command
            .iter()
            .filter(|w| !replaces(w))
            .cloned()
            .collect();
        let Some(first) = words.first() else {
            self.opaque("`parallel` runs a command only known when the script runs");
            return;
        };
        let program = base_name(first);
        if programs::takes_files(program) {
            let piped = self.piped_from.as_deref();
            match programs::xargs_reads(piped, &words) {
                Some(roots) if call.arg_files.is_empty() => {
                    self.producer_reads(&roots, None, program)
                }
                _ => self.opaque(format!(
                    "`parallel` gives `{program}` words read when the script runs; which files they name cannot be checked"
                )),
            }
        }
        self.parallel_runs(&words, call.quoted, heredoc, level);
    }

    /// One run of `parallel`'s command: shell text (its words joined with
    /// spaces, as `parallel` hands them to a shell), or the words as they
    /// are with `-q`.
    fn parallel_runs(&mut self, words: &[String], quoted: bool, heredoc: bool, level: usize) {
        if quoted {
            self.command_words(words, heredoc, level + 1);
        } else {
            self.script(&words.join(" "));
        }
    }
}
