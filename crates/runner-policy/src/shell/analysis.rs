//! What the analysis of a script finds: the simple commands it would run,
//! the files it reads and writes, or why it cannot be checked; and the
//! signatures that follow from them.

use std::path::Path;

use std::collections::HashSet;

use super::budget::{MAX_SIGNATURES, too_complex};
use super::expand::{ExpansionBudget, expand_glob, has_glob};
use crate::paths::{SignaturePaths, to_slash};
use crate::programs;
use crate::signature::{Family, Signature};
use crate::words::join_words;

/// One simple command: its words with quotes removed (dynamic parts kept as
/// written, e.g. `$HOME`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The words, program first.
    pub words: Vec<String>,
}

impl SimpleCommand {
    /// The program word as written.
    pub fn program(&self) -> &str {
        self.words.first().map(String::as_str).unwrap_or("")
    }
}

/// A file (or folder) a script reads or writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathUse {
    /// As written: relative to the folder the script starts in, unless
    /// absolute.
    pub path: String,
    /// The folders the script may be in when it uses the path.
    pub cwds: Vec<String>,
    /// Everything beneath the path too (`grep -r`, `rm -r`, `tar -x`).
    pub tree: bool,
    /// What git's history holds beneath the path (`git log -p`): see
    /// [`Signature::history`].
    pub history: bool,
}

/// The result of analysing a script.
#[derive(Debug, Clone, Default)]
pub struct ShellAnalysis {
    /// The script.
    pub text: String,
    /// Every simple command it would run, wrapped ones included.
    pub commands: Vec<SimpleCommand>,
    /// Other readings of some of those commands, for deny rules only
    /// ([`Signature::deny_only`]): `docker image push` for `docker push`.
    pub also_read_as: Vec<SimpleCommand>,
    /// Files written by redirections or `tee`, as written (relative to the
    /// folder the script starts in unless absolute), with the folders the
    /// script may have `cd`-ed into.
    pub writes: Vec<PathUse>,
    /// Files read by `<` or by well-known readers.
    pub reads: Vec<PathUse>,
    /// Why the script cannot be analysed, when it cannot.
    pub opaque: Option<String>,
    /// Some command of it starts a program its words show (`rg --pre X`):
    /// see [`Signature::starts`].
    pub starts: bool,
    /// Why what the script runs also depends on the startup files of the
    /// machine and user (`bash -lc CMD`), when it does: see
    /// [`Signature::unless_confined`].
    pub startup_files: Option<String>,
    /// Why some reader gets words split from the paths a producer prints
    /// (`find src | xargs cat`: a name with a blank or a newline in it
    /// becomes words that can name any file, inside the workspace or not),
    /// when one does: read as reads of the whole workspace, and outside it
    /// only where commands are confined (see
    /// [`Signature::unless_confined`]).
    pub split_paths: Option<String>,
}

impl ShellAnalysis {
    /// True when nothing in the script writes: every command is a known
    /// reader and no redirection writes.
    pub fn is_read_only(&self) -> bool {
        self.opaque.is_none()
            && self.startup_files.is_none()
            && self.split_paths.is_none()
            && self.writes.is_empty()
            && !self.commands.is_empty()
            && self.commands.iter().all(|c| programs::only_reads(&c.words))
    }

    /// The signatures of the script run from `cwd` (workspace-relative).
    pub fn signatures(&self, ws: &dyn SignaturePaths, cwd: &str) -> Vec<Signature> {
        if let Some(why) = &self.opaque {
            return vec![Signature {
                starts: self.starts,
                ..Signature::opaque(Family::Bash, self.text.clone(), why.clone())
            }];
        }
        let opaque = |why: String| vec![Signature::opaque(Family::Bash, self.text.clone(), why)];
        let mut out: Vec<Signature> = Vec::new();
        let mut seen: HashSet<Signature> = HashSet::new();
        let mut push = |s: Signature| {
            if seen.insert(s.clone()) {
                out.push(s);
            }
            out.len() <= MAX_SIGNATURES
        };
        let too_many = || too_complex(&format!("more than {MAX_SIGNATURES} signatures"));
        for why in [&self.startup_files, &self.split_paths]
            .into_iter()
            .flatten()
        {
            push(Signature {
                unless_confined: true,
                ..Signature::opaque(Family::Bash, self.text.clone(), why.clone())
            });
        }
        for c in &self.commands {
            let mut words = programs::canonical_words(&c.words);
            if let Some(first) = words.first()
                && first.starts_with('/')
                && let Some(name) = ws.program_on_path(first)
            {
                words.to_mut()[0] = name;
            }
            if !push(Signature::new(Family::Bash, join_words(&words))) {
                return opaque(too_many());
            }
        }
        // A script the command runs by its path, whose `#!` line can be
        // read: the kernel runs its interpreter with the line's argument,
        // the script's path and the command's words, and a deny rule on
        // that interpreter meets it.
        for c in &self.commands {
            let Some(first) = c.words.first().filter(|w| w.contains('/')) else {
                continue;
            };
            let at = if first.starts_with('/') {
                first.clone()
            } else {
                to_slash(&Path::new(cwd).join(first))
            };
            let Some(mut words) = ws.interpreter_line(&at) else {
                continue;
            };
            words.extend(c.words.iter().cloned());
            let sig = Signature {
                deny_only: true,
                ..Signature::new(Family::Bash, join_words(&programs::canonical_words(&words)))
            };
            if !push(sig) {
                return opaque(too_many());
            }
        }
        for c in &self.also_read_as {
            let words = programs::canonical_words(&c.words);
            let sig = Signature {
                deny_only: true,
                ..Signature::new(Family::Bash, join_words(&words))
            };
            if !push(sig) {
                return opaque(too_many());
            }
        }
        let mut budget = ExpansionBudget::default();
        for (family, list) in [(Family::Edit, &self.writes), (Family::Read, &self.reads)] {
            for PathUse {
                path,
                cwds,
                tree,
                history,
            } in list
            {
                for c in cwds {
                    let dir = Path::new(cwd).join(c);
                    let paths = if has_glob(path) {
                        match expand_glob(&ws.root().join(&dir), path, &mut budget) {
                            Some(p) => p,
                            None => {
                                return opaque(too_complex(&format!(
                                    "its glob operands match more files than can be checked, at `{path}`"
                                )));
                            }
                        }
                    } else {
                        vec![path.clone()]
                    };
                    for path in paths {
                        // `~/x` is the home folder's, from any folder: kept
                        // as written (never the workspace's).
                        let home = crate::world::in_home(&path);
                        let joined = if path.starts_with('/') || home {
                            path
                        } else {
                            dir.join(path).to_string_lossy().into_owned()
                        };
                        let paths = if home {
                            let p = crate::paths::normalize_lexically(Path::new(&joined));
                            vec![crate::paths::to_slash(&p)]
                        } else {
                            ws.signature_paths(&joined)
                        };
                        for p in paths {
                            let sig = if *history && *tree {
                                Signature::history(p)
                            } else if *history {
                                Signature {
                                    history: true,
                                    ..Signature::new(family, p)
                                }
                            } else if *tree {
                                Signature::tree(family, p)
                            } else {
                                Signature::new(family, p)
                            };
                            if !push(sig) {
                                return opaque(too_many());
                            }
                        }
                    }
                }
            }
        }
        out
    }
}
