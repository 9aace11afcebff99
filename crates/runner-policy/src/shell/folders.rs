//! Where the script is when it uses a path: `cd` (and `pushd`) move it,
//! subshells, pipelines and substitutions keep their `cd` to themselves,
//! and a `cd` whose failure stops what follows (`cd DIR && ...`, or under
//! a top-level `set -e`) leaves the script in DIR only. Otherwise a `cd`
//! adds a folder the script may be in (`cd a || true` may stay). The
//! folder a `cd` enters is read: what runs there uses it unnamed (`cd
//! /elsewhere && git status` reads a repository outside the workspace).

use brush_parser::ast;

use super::state::{MAX_CWDS, Walker, WordValue};

impl Walker {
    /// Walks what runs in a subshell: the folder it `cd`s to is its own.
    pub(super) fn in_subshell(&mut self, walk: impl FnOnce(&mut Self)) {
        let cwds = self.cwds.clone();
        let errexit = self.errexit;
        walk(self);
        self.cwds = cwds;
        self.errexit = errexit;
    }

    /// Tracks `set -e` / `set -o errexit` at the top of the script, with
    /// `set`'s options read as bash reads them: clusters of `-x`/`+x`,
    /// `-o NAME` (`-eo pipefail` too), ended by `--`, `-` or the first
    /// word that is none (the positional parameters: `set -- -e` sets
    /// `$1`); a word starting `--` is refused.
    pub(super) fn set_options(&mut self, args: &[String]) {
        let top = self.depth == 1 && self.compound_depth == 0;
        let mut i = 0;
        while let Some(a) = args.get(i) {
            let on = a.starts_with('-');
            if a.len() < 2 || a.starts_with("--") || !(on || a.starts_with('+')) {
                break;
            }
            let flags = &a[1..];
            if flags.contains('e') {
                self.errexit = on && top;
            }
            // Each `o` in the cluster takes the next word.
            let names = flags.matches('o').count();
            if args[i + 1..].iter().take(names).any(|n| n == "errexit") {
                self.errexit = on && top;
            }
            i += 1 + names;
        }
    }

    pub(super) fn cd(&mut self, args: &[WordValue]) {
        let target = args
            .iter()
            .find(|w| !w.text.starts_with('-') || w.text == "-");
        match target {
            Some(t) if !t.dynamic && t.text != "-" => {
                let replace = self.cd_must_succeed;
                if let Some(cwds) = &mut self.cwds {
                    let mut next = if replace { Vec::new() } else { cwds.clone() };
                    for c in cwds.iter() {
                        let joined = if t.text.starts_with('/') {
                            t.text.clone()
                        } else {
                            format!("{c}/{}", t.text)
                        };
                        if !next.contains(&joined) {
                            next.push(joined);
                        }
                    }
                    // Every `cd` can double the folders a script may be in
                    // (`cd a || true` keeps both): past a few dozen, the
                    // folder is unknown, and relative paths fail closed.
                    if next.len() > MAX_CWDS {
                        self.cwds = None;
                    } else {
                        *cwds = next;
                    }
                }
                self.add_working_folder();
            }
            _ => self.cwds = None,
        }
    }
}

/// A pipeline that is one `cd` (or `pushd`) and nothing else.
pub(super) fn is_lone_cd(p: &ast::Pipeline) -> bool {
    match p.seq.as_slice() {
        [ast::Command::Simple(s)] => {
            s.prefix.is_none()
                && s.word_or_name
                    .as_ref()
                    .is_some_and(|w| matches!(w.value.as_str(), "cd" | "pushd"))
        }
        _ => false,
    }
}
