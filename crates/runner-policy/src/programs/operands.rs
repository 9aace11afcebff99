//! What one command does with files, as its program's model reads its
//! words: the record every program model fills in.

/// What one command does with files, as far as its words tell.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct FileOperands {
    /// Files (or folders) it reads.
    pub reads: Vec<String>,
    /// Files (or folders) it writes, creates or deletes.
    pub writes: Vec<String>,
    /// Folders it reads everything beneath (`grep -r`, `cp -r`, `tar -c`).
    pub tree_reads: Vec<String>,
    /// Folders it may write anything beneath (`rm -r`, `mv`, `tar -x -C`,
    /// the destination of `cp`).
    pub tree_writes: Vec<String>,
    /// Folders whose content in git's history it reads (`git log -p`,
    /// `git show REV`, `git archive REV`): see [`crate::Signature::history`].
    pub history_reads: Vec<String>,
    /// Set with `opaque` when what cannot be checked is a program the words
    /// show being started (`rg --pre X`, `sed s///e`, `awk 'system(...)'`):
    /// see [`crate::Signature::starts`].
    pub starts: bool,
    /// Why the command cannot be checked: it runs or writes what its words
    /// do not show (`sed e`, `awk 'system(...)'`, `tar --to-command`).
    pub opaque: Option<String>,
}

impl FileOperands {
    /// Every relative name taken as `dir`'s, for a program that changes
    /// folder before it reads or writes (`git -C`, `make -C`, `patch -d`):
    /// `.` is `dir` itself.
    pub(super) fn beneath(&mut self, dir: &str) {
        for list in [
            &mut self.reads,
            &mut self.writes,
            &mut self.tree_reads,
            &mut self.tree_writes,
            &mut self.history_reads,
        ] {
            for p in list.iter_mut() {
                if p == "." {
                    *p = dir.to_string();
                } else if !p.starts_with('/') {
                    *p = format!("{dir}/{p}");
                }
            }
        }
    }

    /// Marks the command opaque; the first reason is kept.
    pub(super) fn opaque(&mut self, why: impl Into<String>) {
        if self.opaque.is_none() {
            self.opaque = Some(why.into());
        }
    }

    /// Marks the command opaque because it starts a program its words show
    /// (the program's own rule must allow it, backstops or not).
    pub(super) fn starts(&mut self, why: impl Into<String>) {
        self.opaque(why);
        self.starts = true;
    }
}
