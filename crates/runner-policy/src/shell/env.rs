//! `env`: the assignments it makes and the command it runs, its options
//! read as GNU and BSD `env` read them.

use super::state::Walker;
use super::wrappers::is_runtime_word;

impl Walker {
    /// `env [OPTION]... [NAME=VALUE]... [COMMAND [ARG]...]`, its options
    /// read as getopt reads them: clusters (`-iC DIR`, `-CDIR`), long
    /// names by any unique prefix (`--ch=DIR`). `-C`/`--chdir` moves the
    /// command to a folder (which one the walk then does not follow), `-S`
    /// splits a string into a command, BSD's `-P` names where programs
    /// are found.
    pub(super) fn unwrap_env(&mut self, args: &[String], heredoc: bool, level: usize) {
        let mut i = 0;
        while let Some(a) = args.get(i) {
            i += 1;
            if a == "--" {
                break;
            }
            if let Some(long) = a.strip_prefix("--") {
                let (name, attached) = match long.split_once('=') {
                    Some((n, _)) => (n, true),
                    None => (long, false),
                };
                // env's long options that take a value; each is known by
                // its first letter alone.
                let is = |full: &str| !name.is_empty() && full.starts_with(name);
                if is("split-string") {
                    self.opaque("`env -S` splits a string into a command");
                    return;
                }
                if is("chdir") {
                    self.cwds = None;
                }
                if (is("chdir") || is("unset") || is("argv0")) && !attached {
                    i += 1;
                }
                continue;
            }
            if let Some(cluster) = a.strip_prefix('-') {
                // `-` alone is `-i`. In a cluster, the first letter that
                // takes a value ends it, its value the rest or the next word.
                for (at, c) in cluster.char_indices() {
                    match c {
                        'S' => {
                            self.opaque("`env -S` splits a string into a command");
                            return;
                        }
                        'P' => {
                            self.opaque("`env -P` names the folders programs are found in");
                            return;
                        }
                        'C' | 'u' | 'a' => {
                            if c == 'C' {
                                self.cwds = None;
                            }
                            if at + 1 == cluster.len() {
                                i += 1;
                            }
                            break;
                        }
                        _ => {}
                    }
                }
                continue;
            }
            if let Some((name, value)) = a.split_once('=') {
                self.set_variable(name, value, !is_runtime_word(value), level);
                continue;
            }
            i -= 1;
            break;
        }
        self.command_words(args.get(i..).unwrap_or(&[]), heredoc, level + 1);
    }
}
