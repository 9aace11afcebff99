//! Redirections and the files a script reads and writes: each path is
//! recorded with the folders the script may be in when it uses it (after
//! its `cd`s), `Edit` for what a redirection writes and `Read` for what it
//! reads; the standard streams and `/dev/null` are not files.

use brush_parser::ast;

use super::analysis::PathUse;
use super::budget::{MAX_SIGNATURES, too_complex};
use super::state::Walker;

impl Walker {
    /// Records a file read or written (`tree`: and everything beneath it),
    /// relative to every folder the script may be in.
    pub(super) fn add_path(&mut self, write: bool, path: &str, tree: bool) {
        if is_stream_path(path) || path == "-" {
            return;
        }
        self.add_file(write, path, tree);
    }

    /// [`Walker::add_path`] for a redirection's target, where `-` is a
    /// file named `-` (programs read it as standard input or output).
    fn add_redirect_path(&mut self, write: bool, path: &str) {
        if is_stream_path(path) {
            return;
        }
        self.add_file(write, path, false);
    }

    /// A read of what git's history holds at `path` (`tree`: and beneath).
    pub(super) fn add_history_path(&mut self, path: &str, tree: bool) {
        self.add_use(false, path, tree, true);
    }

    /// The folders a `cd` took the script to that lie above where it
    /// started or elsewhere on the machine: programs use the folder they
    /// run in unnamed (`git status`, `ls`, `make`), so entering one is
    /// reading it. Folders beneath the start need no signature: what runs
    /// there names its files, and they resolve beneath.
    pub(super) fn add_working_folder(&mut self) {
        let Some(cwds) = &self.cwds else {
            return;
        };
        let away: Vec<String> = cwds
            .iter()
            .filter(|c| {
                let p = crate::paths::normalize_lexically(std::path::Path::new(c.as_str()));
                p.is_absolute() || p.starts_with("..")
            })
            .cloned()
            .collect();
        for folder in away {
            let saved = self.cwds.replace(vec![".".to_string()]);
            self.add_use(false, &folder, false, false);
            self.cwds = saved;
        }
    }

    fn add_file(&mut self, write: bool, path: &str, tree: bool) {
        self.add_use(write, path, tree, false);
    }

    fn add_use(&mut self, write: bool, path: &str, tree: bool, history: bool) {
        if self.done() {
            return;
        }
        // Each use becomes at least one signature per folder the script
        // may be in: `find` roots times `{}`, `cd`s times operands.
        let folders = self.cwds.as_ref().map_or(1, Vec::len);
        self.path_signatures += folders;
        if self.path_signatures > MAX_SIGNATURES {
            self.opaque(too_complex(&format!(
                "it names more than {MAX_SIGNATURES} files and folders"
            )));
            return;
        }
        let cwds = match &self.cwds {
            Some(c) => c.clone(),
            None if path.starts_with('/') || crate::world::in_home(path) => vec![".".into()],
            None => {
                let what = if write { "writes" } else { "reads" };
                self.opaque(format!(
                    "it {what} `{path}` after a `cd` to a folder not known before running"
                ));
                return;
            }
        };
        let entry = PathUse {
            path: path.to_string(),
            cwds,
            tree,
            history,
        };
        if write {
            self.out.writes.push(entry);
        } else {
            self.out.reads.push(entry);
        }
    }

    pub(super) fn redirect(&mut self, io: &ast::IoRedirect) {
        use ast::{IoFileRedirectKind as K, IoFileRedirectTarget as T, IoRedirect as R};
        match io {
            R::File(_, kind, target) => match target {
                T::Filename(w) => {
                    let v = self.word(w);
                    if v.dynamic || v.unquoted_magic {
                        if matches!(kind, K::Read | K::DuplicateInput) {
                            self.opaque(format!(
                                "it reads from `{}`, a path only known when the script runs",
                                v.text
                            ));
                        } else {
                            self.opaque(format!(
                                "it writes to `{}`, a path only known when the script runs",
                                v.text
                            ));
                        }
                        return;
                    }
                    match kind {
                        K::Read => self.add_redirect_path(false, &v.text),
                        K::Write | K::Append | K::Clobber | K::DuplicateOutput => {
                            self.add_redirect_path(true, &v.text)
                        }
                        K::ReadAndWrite => {
                            self.add_redirect_path(false, &v.text);
                            self.add_redirect_path(true, &v.text);
                        }
                        K::DuplicateInput => {}
                    }
                }
                T::Fd(_) => {}
                T::Duplicate(w) => {
                    let v = self.word(w);
                    let t = v.text.trim_end_matches('-');
                    if !t.is_empty() && !t.chars().all(|c| c.is_ascii_digit()) {
                        if v.dynamic {
                            self.opaque(
                                "a redirection to a target only known when the script runs",
                            );
                        } else if matches!(kind, K::DuplicateOutput) {
                            self.add_path(true, t, false);
                        }
                    }
                }
                T::ProcessSubstitution(_, sub) => self.in_subshell(|w| w.compound_list(&sub.list)),
            },
            R::HereDocument(_, doc) => {
                // An unquoted body is expanded as a double-quoted word; one
                // with no substitution in it (`$(`, `${`, `$[`, a backtick)
                // runs nothing and is data, however long.
                if doc.requires_expansion && expands_code(&doc.doc.value) {
                    self.word_text(&format!("\"{}\"", doc.doc.value.replace('"', "\\\"")));
                }
            }
            R::HereString(_, w) => {
                self.word(w);
            }
            R::OutputAndError(w, _) => {
                let v = self.word(w);
                if v.dynamic || v.unquoted_magic {
                    self.opaque(format!(
                        "it writes to `{}`, a path only known when the script runs",
                        v.text
                    ));
                } else {
                    self.add_redirect_path(true, &v.text);
                }
            }
        }
    }
}

/// Whether an unquoted heredoc body holds an expansion that may run code:
/// a command substitution, or a `${...}`/`$[...]` whose parts bash
/// evaluates. `$NAME` alone only reads a variable.
pub(crate) fn expands_code(body: &str) -> bool {
    body.contains("$(") || body.contains("${") || body.contains("$[") || body.contains('`')
}

/// Paths that are streams, not files: writing them edits nothing.
fn is_stream_path(p: &str) -> bool {
    matches!(
        p,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/stdin" | "/dev/tty"
    ) || p.starts_with("/dev/fd/")
}
