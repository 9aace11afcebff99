//! Configuration keys that cannot make a program run another one.
//!
//! `git -c KEY=VALUE` and `git config KEY VALUE` can set aliases, pagers,
//! editors, diff and merge drivers, hooks folders, `core.sshCommand`,
//! `gpg.program`: any of them runs a program the policy never sees, so git
//! with an unknown key is opaque. The keys below only change how git
//! shows, names or transfers things, and are plain git. The same for
//! `cargo --config KEY=VALUE`, where `target.*.runner`, `build.rustc`,
//! `build.rustc-wrapper`, `alias.*`, `env.*` and `*.rustflags` (which can
//! name a linker) run programs and stay opaque.

/// git keys (lower case) that set no program: exact names, or a prefix
/// ending in `.` for a whole section.
const GIT_KEYS: &[&str] = &[
    "user.",
    "author.",
    "committer.",
    "color.",
    "advice.",
    "i18n.",
    "column.",
    "status.",
    "log.",
    "blame.",
    "pretty.",
    "rerere.",
    "pull.rebase",
    "pull.ff",
    "push.default",
    "push.autosetupremote",
    "push.followtags",
    "fetch.prune",
    "fetch.prunetags",
    "fetch.parallel",
    "merge.ff",
    "merge.conflictstyle",
    "rebase.autostash",
    "rebase.autosquash",
    "rebase.updaterefs",
    "gc.auto",
    "gc.autodetach",
    "init.defaultbranch",
    "safe.directory",
    "core.quotepath",
    "core.autocrlf",
    "core.eol",
    "core.filemode",
    "core.ignorecase",
    "core.safecrlf",
    "core.abbrev",
    "core.longpaths",
    "core.symlinks",
    "core.precomposeunicode",
    "diff.renames",
    "diff.algorithm",
    "diff.context",
    "diff.noprefix",
    "diff.mnemonicprefix",
    "diff.indentheuristic",
    "format.pretty",
    "commit.verbose",
    "commit.cleanup",
    "tag.sort",
    "branch.sort",
    "branch.autosetupmerge",
    "checkout.defaultremote",
    "protocol.version",
    "transfer.fsckobjects",
    "feature.manyfiles",
    "index.version",
];

/// Keys that sign with a program unless turned off.
const GIT_SIGNING: &[&str] = &["commit.gpgsign", "tag.gpgsign", "push.gpgsign"];

/// Whether `git -c KEY=VALUE` (or `git config KEY VALUE`) can make git run
/// no program.
pub fn git_key_runs_nothing(key: &str, value: Option<&str>) -> bool {
    let key = key.to_ascii_lowercase();
    if GIT_SIGNING.contains(&key.as_str()) {
        return value.is_some_and(|v| matches!(v, "false" | "no" | "off" | "0"));
    }
    GIT_KEYS.iter().any(|k| {
        if k.ends_with('.') {
            key.starts_with(k)
        } else {
            key == *k
        }
    })
}

/// cargo config keys that set no program.
const CARGO_KEYS: &[&str] = &[
    "profile.",
    "build.jobs",
    "build.incremental",
    "build.target-dir",
    "net.",
    "http.timeout",
    "http.multiplexing",
    "http.low-speed-limit",
    "http.check-revoke",
    "term.",
    "cargo-new.",
    "future-incompat-report.",
];

/// Whether `cargo --config KEY=VALUE` sets no program (a `--config FILE`
/// is read by cargo and may set anything).
pub fn cargo_config_runs_nothing(arg: &str) -> bool {
    let Some((key, _)) = arg.split_once('=') else {
        return false;
    };
    let key = key.trim().trim_matches('"');
    !key.contains("rustflags")
        && CARGO_KEYS.iter().any(|k| {
            if k.ends_with('.') {
                key.starts_with(k)
            } else {
                key == *k
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_that_run_nothing() {
        assert!(git_key_runs_nothing("user.email", Some("a@b")));
        assert!(git_key_runs_nothing("color.ui", Some("always")));
        assert!(git_key_runs_nothing("core.quotePath", Some("false")));
        assert!(git_key_runs_nothing("commit.gpgsign", Some("false")));
        assert!(!git_key_runs_nothing("commit.gpgsign", Some("true")));
        assert!(!git_key_runs_nothing("core.pager", Some("sh")));
        assert!(!git_key_runs_nothing("core.sshcommand", Some("x")));
        assert!(!git_key_runs_nothing("alias.st", Some("!rm -rf /")));
        assert!(!git_key_runs_nothing("diff.x.textconv", Some("x")));
        assert!(!git_key_runs_nothing("init.templatedir", Some("/tmp")));
        assert!(cargo_config_runs_nothing("profile.dev.opt-level=1"));
        assert!(cargo_config_runs_nothing("net.git-fetch-with-cli=true"));
        assert!(!cargo_config_runs_nothing(
            "target.x86_64-unknown-linux-gnu.runner='sh'"
        ));
        assert!(!cargo_config_runs_nothing("build.rustc-wrapper=x"));
        assert!(!cargo_config_runs_nothing(
            "profile.dev.rustflags=['-Clinker=x']"
        ));
        assert!(!cargo_config_runs_nothing("extra.toml"));
    }
}
