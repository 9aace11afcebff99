//! The exec wall: every `execve` of a supervised command is decided on its
//! real argv against the policy's `Bash` deny rules, through the same
//! program models as the analysis (`git -c k=v push` is `git push`).
//!
//! So code the analysis cannot see into (`python3 -c`, a heredoc program,
//! a Makefile recipe) may run under a policy that denies programs: what it
//! starts is decided when it starts it. Wrappers need no unwrapping here
//! (`env git push` execs `git` itself, and that exec is decided too).
//!
//! **Which program.** A program is named by the base name of the path it
//! is executed by and by its `argv[0]`; a deny rule matching either
//! refuses. `git-push` is `git push` (git runs the subcommand its
//! `argv[0]` ends in), so a rule on `git` reads it too. A copy or a link of a denied program is the same program: the
//! denied programs' executables (found on the commands' `PATH` when the
//! task starts) are known by device and inode (a hard link, a symlink, the
//! same file under any name), and by size and content (a copy); a file of
//! the same size as a denied program is read and compared, anything else
//! costs one `stat`.
//!
//! **Unreadable argv.** Where the program's model cannot read the argv
//! (`git -c alias.p=push p`, `git -c core.pager=...`: what git does is in
//! the configuration it is given), the exec of a program a deny rule names
//! is refused by that rule: the wall fails closed.
//!
//! **Cost.** An exec whose names no deny rule names is decided without
//! the analysis: a table look-up ([`ExecGuard::may_deny`]), on its path
//! and `argv[0]` alone (the supervisor reads no more of it). Only a denied
//! program's argv is read whole and analysed.
//!
//! **Two looks.** The argv is read from the stopped process at its
//! notification, and the call then goes on with the memory and the file
//! system as they are then: another thread could change the argv, a link
//! could be swapped for the path, a `#!` line or a loader could run a
//! program the first look never saw. So the supervisor follows each exec
//! it lets go to where the kernel commits it (`supervisor::follow`) and
//! decides again on what the kernel built: the file it mapped, the argv
//! on the new stack. The loader, run as a program, is decided as the
//! program it is given (`loader`).

use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use runner_policy::programs::git_names::{self, Runs, program_of};
use runner_policy::{Family, PolicySet, Signature};

use super::aliases;

mod loader;
pub use loader::{LOADER, Loads, reading as loader_reading, swappable};

pub use crate::contain::ExecRefusal;

/// A denied program's executable.
#[derive(Debug)]
struct Executable {
    name: String,
    path: PathBuf,
    size: u64,
    content: OnceLock<Option<u64>>,
}

/// A deny rule as a refusal names it.
#[derive(Debug, Clone)]
struct FirstRule {
    /// `deny Bash(git push:*)`.
    rule: String,
    policy: String,
    line: u64,
}

/// The names one exec goes by ([`ExecGuard::names`]).
#[derive(Debug)]
pub struct ExecNames(Vec<String>);

impl ExecNames {
    /// Whether the file is a dynamic loader (see [`loader`]): what it runs
    /// is the program it is given.
    pub fn is_loader(&self) -> bool {
        self.0.iter().any(|n| n == LOADER)
    }
}

/// What the exec wall decides with.
pub struct ExecGuard {
    policy: Arc<PolicySet>,
    /// The programs the deny rules name (base names), each with the first
    /// rule naming it: what refuses an argv of it the model cannot read.
    denied: BTreeMap<String, FirstRule>,
    /// Some deny rule's program is a pattern (`git*`, `*`): every exec is
    /// analysed.
    any: bool,
    executables: Vec<Executable>,
    by_inode: HashMap<(u64, u64), usize>,
}

impl std::fmt::Debug for ExecGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecGuard")
            .field("denied", &self.denied)
            .field("any", &self.any)
            .finish()
    }
}

/// A word as bash reads it back: bare when it holds only characters that
/// mean nothing to bash, single-quoted otherwise.
fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./=:,@%+-".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// `words` as a shell would be given them, each quoted where it needs it.
fn join_quoted(words: &[String]) -> String {
    words
        .iter()
        .map(|w| shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `rule` of a refusal by the wall itself, of an exec it could not
/// read (no rule of the policy can be told for it).
pub const UNREADABLE_EXEC: &str = "the exec wall: an exec it cannot read";

/// The `rule` of a refusal by the wall itself, of an exec it cannot
/// follow to where the kernel commits it.
pub const UNFOLLOWABLE_EXEC: &str = "the exec wall: an exec it cannot follow";

/// The `rule` of a refusal by the wall itself, of a loader's program it
/// cannot decide.
pub const UNDECIDABLE_LOAD: &str = "the exec wall: a loader's program it cannot decide";

/// A file's content, hashed (FNV-1a over the bytes).
fn content_hash(path: &Path) -> Option<u64> {
    let bytes = std::fs::read(path).ok()?;
    Some(crate::hash::fnv1a(&bytes))
}

impl ExecGuard {
    /// The guard for `policy`'s `Bash` deny rules, with the programs
    /// looked up on `path` (the commands' `PATH`); none when no rule
    /// denies a program, or every one has a wall already (`sudo` under
    /// `no_new_privs`, a network program with the network off: `without`).
    pub fn new(
        policy: Arc<PolicySet>,
        path: Option<&str>,
        without: runner_policy::Backstops,
    ) -> Option<Self> {
        let mut denied = BTreeMap::new();
        let mut any = false;
        for layer in policy.layers() {
            for rule in layer.rules.iter().filter(|r| !r.allow) {
                if rule.pattern.family != Family::Bash || without.backs_rule(&rule.pattern) {
                    continue;
                }
                match rule.pattern.program() {
                    Some(p) => {
                        denied.entry(p.to_string()).or_insert_with(|| FirstRule {
                            rule: format!("deny {}", rule.pattern.text),
                            policy: layer.source.clone(),
                            line: rule.line,
                        });
                    }
                    None => any = true,
                }
            }
        }
        if denied.is_empty() && !any {
            return None;
        }
        let mut executables = Vec::new();
        let mut by_inode = HashMap::new();
        // The loaders, known as the denied programs are: a copy of one
        // under another name is still a loader.
        let loaders = loader::machine_loaders().iter().filter_map(|p| {
            let meta = std::fs::metadata(p).ok()?;
            Some((LOADER.to_string(), p.clone(), meta))
        });
        let programs = denied.keys().flat_map(|name| {
            crate::contain::programs_on_path(name, path)
                .into_iter()
                .map(move |(p, m)| (name.clone(), p, m))
        });
        for (name, candidate, meta) in programs.chain(loaders) {
            let key = (meta.dev(), meta.ino());
            if by_inode.contains_key(&key) {
                continue;
            }
            by_inode.insert(key, executables.len());
            executables.push(Executable {
                name,
                path: candidate,
                size: meta.len(),
                content: OnceLock::new(),
            });
        }
        Some(Self {
            policy,
            denied,
            any,
            executables,
            by_inode,
        })
    }

    /// The denied program `exe` (whose metadata is `meta`) is: the same
    /// file, or a copy of it.
    fn identity(&self, exe: &Path, meta: &std::fs::Metadata) -> Option<&str> {
        if let Some(&i) = self.by_inode.get(&(meta.dev(), meta.ino())) {
            return Some(&self.executables[i].name);
        }
        let same_size: Vec<&Executable> = self
            .executables
            .iter()
            .filter(|e| e.size == meta.len() && meta.len() > 0)
            .collect();
        if same_size.is_empty() {
            return None;
        }
        let mine = content_hash(exe)?;
        same_size
            .into_iter()
            .find(|e| *e.content.get_or_init(|| content_hash(&e.path)) == Some(mine))
            .map(|e| e.name.as_str())
    }

    /// Decides the exec that goes by `names` with `argv` and the
    /// environment `env` it gives the program (read only where
    /// [`ExecGuard::reads_environment`] says), in folder `cwd`: the
    /// refusal, if a deny rule matches.
    pub fn decide(
        &self,
        names: &ExecNames,
        argv: &[String],
        env: &[String],
        cwd: &Path,
    ) -> Option<ExecRefusal> {
        let args = argv.get(1..).unwrap_or_default();
        for name in &names.0 {
            if !self.any && !self.denied.contains_key(program_of(name)) {
                continue;
            }
            if let Some(refusal) = self.denied_as(name, args, argv, cwd) {
                return Some(refusal);
            }
            // cargo and gh expand their aliases themselves, with no exec
            // of their own.
            let program = program_of(name);
            if aliases::expands_aliases(program) {
                let mut words = vec![name.clone()];
                words.extend(args.iter().cloned());
                let refusal = match aliases::readings(program, &words, cwd, env) {
                    Ok(readings) => readings
                        .iter()
                        .find_map(|r| self.denied_as(name, &r[1..], argv, cwd)),
                    Err(why) => {
                        self.rule_for(name, argv, format!("{program}'s aliases unreadable: {why}"))
                    }
                };
                if refusal.is_some() {
                    return refusal;
                }
            }
        }
        None
    }

    /// Whether [`ExecGuard::decide`] needs the exec's environment: for a
    /// program whose aliases it reads (where its configuration is, cargo's
    /// `CARGO_ALIAS_*`), when a deny rule names it.
    pub fn reads_environment(&self, names: &ExecNames) -> bool {
        names.0.iter().any(|n| {
            let program = program_of(n);
            aliases::expands_aliases(program) && (self.any || self.denied.contains_key(program))
        })
    }

    /// Whether an exec that goes by `names` may be one a rule denies: some
    /// name is a denied program's (or a rule's program is a pattern). When
    /// not, [`ExecGuard::decide`] refuses nothing, and the rest of the argv
    /// need not be read.
    pub fn may_deny(&self, names: &ExecNames) -> bool {
        self.any
            || names.is_loader()
            || names
                .0
                .iter()
                .any(|n| self.denied.contains_key(program_of(n)))
    }

    /// The names an exec of `exe` with `argv0` goes by: its path's base
    /// name, its `argv[0]`'s, and the denied program it is a copy or link
    /// of (a `stat`, and for a file of a denied program's size a read).
    /// Found once per exec, for each question above.
    ///
    /// `meta`: `exe`'s metadata where the caller has it (else it is
    /// looked up).
    pub fn names(
        &self,
        exe: &Path,
        meta: Option<std::fs::Metadata>,
        argv0: Option<&str>,
    ) -> ExecNames {
        self.names_of(exe.file_name(), exe, meta, argv0)
    }

    /// [`ExecGuard::names`] of a file named `name` whose content is read,
    /// where it must be, at `content` (a process's `/proc/PID/exe`: the
    /// very file it mapped, whatever its path names now).
    pub fn names_of(
        &self,
        name: Option<&std::ffi::OsStr>,
        exe: &Path,
        meta: Option<std::fs::Metadata>,
        argv0: Option<&str>,
    ) -> ExecNames {
        let mut names: Vec<String> = Vec::with_capacity(3);
        if let Some(n) = name {
            let n = n.to_string_lossy();
            if loader::is_loader_name(&n) {
                names.push(LOADER.to_string());
            }
            names.push(n.into_owned());
        }
        if let Some(a0) = argv0 {
            names.push(runner_policy::words::base_name(a0).to_string());
        }
        let meta = meta.or_else(|| std::fs::metadata(exe).ok());
        if let Some(id) = meta.and_then(|m| self.identity(exe, &m)) {
            names.push(id.to_string());
        }
        names.sort();
        names.dedup();
        ExecNames(names)
    }

    /// The refusal of `name args…` by a deny rule, read as the analysis
    /// reads a command (its program model applied).
    fn denied_as(
        &self,
        name: &str,
        args: &[String],
        argv: &[String],
        cwd: &Path,
    ) -> Option<ExecRefusal> {
        let mut words = vec![name.to_string()];
        words.extend(args.iter().cloned());
        // git is decided on the subcommand it runs itself: what its own
        // options set makes it start other programs, each decided here in
        // turn (`git -c alias.p=push p` starts `git push`).
        let read = match program_of(name) {
            "git" => match git_names::by_itself(&words) {
                Runs::Nothing => return None,
                Runs::Unknown => {
                    return self.rule_for(
                        name,
                        argv,
                        "git's own options leave what it runs unknown".into(),
                    );
                }
                Runs::Subcommand(w) => Some(w),
            },
            _ => None,
        };
        let text = join_quoted(read.as_deref().unwrap_or(&words));
        let analysis = runner_policy::shell::analyze(&text);
        let paths = runner_policy::LexicalPaths::new(cwd);
        let mut sigs: Vec<Signature> = analysis
            .signatures(&paths, ".")
            .into_iter()
            .filter(|s| s.family == Family::Bash)
            .collect();
        let opaque = analysis
            .opaque
            .clone()
            .or_else(|| sigs.iter().find_map(|s| s.opaque.clone()));
        // The plain words too, whatever the model makes of them.
        sigs.push(Signature::new(
            Family::Bash,
            runner_policy::words::join_words(&words),
        ));
        let denied = sigs.iter().find_map(|sig| {
            let d = self.policy.denied(sig)?;
            Some(ExecRefusal {
                argv: argv.to_vec(),
                rule: d.rule.unwrap_or_default(),
                policy: d.policy.unwrap_or_default(),
                line: d.line,
                reason: None,
                ended: false,
            })
        });
        // An argv the model cannot read (`python3 -` takes its program
        // from stdin) may be what a rule for this program denies: refused,
        // by that rule. A git subcommand told is read whole above.
        denied.or_else(|| {
            let why = opaque.filter(|_| read.is_none())?;
            self.rule_for(name, argv, format!("its arguments cannot be read: {why}"))
        })
    }

    /// The refusal of an exec that goes by `names` whose `what` (its
    /// arguments, its environment) could not be read from the process, so
    /// that a rule naming the program cannot be decided: by the first such
    /// rule, else by the wall itself ([`ExecGuard::unreadable_exec`]).
    pub fn unreadable(&self, names: &ExecNames, argv: &[String], what: &str) -> ExecRefusal {
        let reason = format!("its {what} could not be read from the process");
        names
            .0
            .iter()
            .find_map(|n| self.rule_for(n, argv, reason.clone()))
            .unwrap_or_else(|| ExecRefusal {
                reason: Some(reason),
                ..Self::unreadable_exec(argv)
            })
    }

    /// The wall's own refusal of an exec it could not read at all (its
    /// path or `argv[0]`): no rule can be told, and what cannot be read is
    /// refused. `argv`: what was read of it (its path).
    pub fn unreadable_exec(argv: &[String]) -> ExecRefusal {
        Self::walls_own(
            UNREADABLE_EXEC,
            argv,
            "its path or argv[0] could not be read from the process".into(),
        )
    }

    /// The wall's own refusal of an exec (what was read of it: `argv`) it
    /// cannot follow to where the kernel runs it, for `reason`.
    pub fn unfollowable(argv: &[String], reason: String) -> ExecRefusal {
        Self::walls_own(UNFOLLOWABLE_EXEC, argv, reason)
    }

    /// The wall's own refusal of a loader run with `argv` whose program it
    /// cannot decide, for `reason`.
    pub fn undecidable_load(argv: &[String], reason: String) -> ExecRefusal {
        Self::walls_own(UNDECIDABLE_LOAD, argv, reason)
    }

    fn walls_own(rule: &str, argv: &[String], reason: String) -> ExecRefusal {
        ExecRefusal {
            argv: argv.to_vec(),
            rule: rule.to_string(),
            policy: "sandbox".to_string(),
            line: None,
            reason: Some(reason),
            ended: false,
        }
    }

    /// The refusal of `argv` by the first deny rule that names the program
    /// `name`, for `reason` (what kept the argv from being decided).
    fn rule_for(&self, name: &str, argv: &[String], reason: String) -> Option<ExecRefusal> {
        let first = self.denied.get(program_of(name))?;
        Some(ExecRefusal {
            argv: argv.to_vec(),
            rule: first.rule.clone(),
            policy: first.policy.clone(),
            line: Some(first.line),
            reason: Some(reason),
            ended: false,
        })
    }
}

#[cfg(test)]
mod tests;
