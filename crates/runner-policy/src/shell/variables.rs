//! Variables whose assignment changes what runs.
//!
//! `PATH=/tmp git status` runs whatever `/tmp/git` is; `LD_PRELOAD`,
//! `BASH_ENV`, `GIT_*`, pagers and editors load or run other programs, and
//! so do the wrappers, compilers and flags of build tools (`RUSTC_WRAPPER`,
//! `RUSTFLAGS`, `CARGO_*`, `CC`, `MAKEFLAGS`, `GOFLAGS`, `npm_config_*`). A
//! script that sets one cannot be checked by its words.

/// Variables whose assignment changes what a command runs or loads.
pub(crate) fn is_risky_variable(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "PATH",
        "BASH_ENV",
        "ENV",
        "PAGER",
        "GIT_PAGER",
        "EDITOR",
        "VISUAL",
        "SHELLOPTS",
        "BASHOPTS",
        "PROMPT_COMMAND",
        "PS4",
        "CDPATH",
        "LESSOPEN",
        "LESSCLOSE",
        "MANPAGER",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "NODE_OPTIONS",
        "PERL5LIB",
        "PERL5OPT",
        "RUBYOPT",
        "RUBYLIB",
        "HOME",
        // Where login and interactive shells find their startup files.
        "ZDOTDIR",
        "XDG_CONFIG_HOME",
        "INPUTRC",
        "SHELL",
        "GLOBIGNORE",
        "BROWSER",
        "TERMINFO",
        "HISTFILE",
        // Build tools: wrappers, compilers and flags that name programs.
        "RUSTC",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTDOC",
        "RUSTFLAGS",
        "RUSTDOCFLAGS",
        "CC",
        "CXX",
        "CPP",
        "AR",
        "LD",
        "MAKE",
        "MAKEFLAGS",
        "GOFLAGS",
        "NODE_PATH",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "GCONV_PATH",
    ];
    EXACT.contains(&name)
        || name.starts_with("LD_")
        || name.starts_with("GIT_")
        || name.starts_with("DYLD_")
        || name.starts_with("BASH_FUNC_")
        || (name.starts_with("CARGO_") && cargo_variable_runs_programs(name))
        || name.to_ascii_lowercase().starts_with("npm_config_")
}

/// cargo's environment configuration that names programs, loads config or
/// flags that can (`CARGO_HOME` holds a config.toml; runners, linkers,
/// wrappers, aliases, credential providers, rustflags). The rest
/// (`CARGO_TERM_COLOR`, `CARGO_INCREMENTAL`, `CARGO_TARGET_DIR`,
/// `CARGO_PROFILE_RELEASE_DEBUG`, `CARGO_NET_*` ...) only tunes a build.
fn cargo_variable_runs_programs(name: &str) -> bool {
    matches!(
        name,
        "CARGO_HOME" | "CARGO_ENCODED_RUSTFLAGS" | "CARGO_ENCODED_RUSTDOCFLAGS"
    ) || name.starts_with("CARGO_BUILD_RUSTC")
        || name.starts_with("CARGO_ALIAS_")
        || name.starts_with("CARGO_REGISTRIES_")
        || name.starts_with("CARGO_REGISTRY_")
        || name.starts_with("CARGO_CREDENTIAL")
        || name.starts_with("CARGO_UNSTABLE_")
        || name.starts_with("CARGO_HOST_")
        || (name.starts_with("CARGO_TARGET_") && name != "CARGO_TARGET_DIR")
        || ["RUSTFLAGS", "RUSTDOCFLAGS", "LINKER", "RUNNER", "WRAPPER"]
            .iter()
            .any(|k| name.ends_with(k))
}

/// Variables whose value is a program (and its first arguments) that a
/// tool runs: `CARGO_TARGET_<triple>_RUNNER=node`, `RUSTC_WRAPPER=sccache`,
/// `CC=clang`, `PAGER=cat`. Such a value is decided as a command of its
/// own, as if the script ran it.
pub(crate) fn names_a_program(name: &str) -> bool {
    matches!(
        name,
        "RUSTC_WRAPPER"
            | "RUSTC_WORKSPACE_WRAPPER"
            | "CC"
            | "CXX"
            | "AR"
            | "PAGER"
            | "GIT_PAGER"
            | "MANPAGER"
            | "EDITOR"
            | "VISUAL"
            | "GIT_EDITOR"
    ) || (name.starts_with("CARGO_TARGET_") && name.ends_with("_RUNNER"))
}

/// The command a program-naming variable stands for: its words, and for
/// cargo's target runners the test binary they are given (under `target`).
pub(super) fn runner_words(name: &str, value: &str) -> Vec<String> {
    let mut words = crate::words::split_words(value);
    if name.ends_with("_RUNNER") {
        words.push("target".into());
    }
    words
}

/// Values of risky variables that cannot make anything else run: rustc
/// flags that only configure the compile (`--cfg X`, `-D warnings`,
/// `-C opt-level=3`; not `-C linker=`, `-C link-arg`, `-Z`), and a `PATH`
/// that only appends folders after the one it had (`$PATH:$PWD/bin`),
/// which can add programs but never replace one the script would find.
pub(super) fn harmless_value(name: &str, value: &str) -> bool {
    match name {
        "RUSTFLAGS" | "RUSTDOCFLAGS" => harmless_rustflags(value),
        "PATH" => {
            let rest = value
                .strip_prefix("$PATH:")
                .or_else(|| value.strip_prefix("${PATH}:"));
            // `$(pwd)` is the folder; any other substitution is unknown.
            rest.map(|r| r.replace("$(pwd)", "").replace("`pwd`", ""))
                .is_some_and(|r| !r.contains("$(") && !r.contains('`') && !r.contains("PATH"))
        }
        _ => false,
    }
}

/// rustc's `-C` keys that only tune code generation.
const HARMLESS_CODEGEN: &[&str] = &[
    "opt-level",
    "debuginfo",
    "debug-assertions",
    "overflow-checks",
    "codegen-units",
    "lto",
    "incremental",
    "panic",
    "strip",
    "target-cpu",
    "target-feature",
    "force-frame-pointers",
    "instrument-coverage",
    "relocation-model",
    "embed-bitcode",
    "split-debuginfo",
    "symbol-mangling-version",
];

/// rustc's `-Z` options that only change checks, layout or diagnostics
/// (not `-Z codegen-backend=`, which loads a library, nor the others).
const HARMLESS_Z: &[&str] = &[
    "sanitizer",
    "sanitizer-memory-track-origins",
    "randomize-layout",
    "fmt-debug",
    "macro-backtrace",
    "threads",
    "share-generics",
    "polonius",
    "unstable-options",
    "build-std",
    "minimal-versions",
    "location-detail",
];

fn harmless_rustflags(value: &str) -> bool {
    let words: Vec<&str> = value.split_whitespace().collect();
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        if let Some(z) = w.strip_prefix("-Z") {
            let z = if z.is_empty() {
                i += 1;
                words.get(i).copied().unwrap_or("")
            } else {
                z
            };
            if !HARMLESS_Z.contains(&z.split('=').next().unwrap_or("")) {
                return false;
            }
            i += 1;
            continue;
        }
        if let Some((flag, _)) = w.split_once('=')
            && matches!(flag, "--cfg" | "--check-cfg" | "--cap-lints")
        {
            if w.contains(['$', '`']) {
                return false;
            }
            i += 1;
            continue;
        }
        let (flag, arg) = match w {
            "--cfg" | "-D" | "-W" | "-A" | "-F" | "--cap-lints" | "-C" | "--check-cfg" => {
                i += 1;
                (w, words.get(i).copied().unwrap_or(""))
            }
            _ if w.len() > 2 && ["-D", "-W", "-A", "-F", "-C"].contains(&&w[..2]) => {
                (&w[..2], &w[2..])
            }
            _ => return false,
        };
        if flag == "-C" {
            let key = arg.split('=').next().unwrap_or("");
            if !HARMLESS_CODEGEN.contains(&key) {
                return false;
            }
        }
        if arg.contains(['$', '`']) {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harmless_values_of_risky_variables() {
        assert!(harmless_value("RUSTFLAGS", "--cfg tokio_unstable"));
        assert!(harmless_value("RUSTFLAGS", "-D warnings -C opt-level=3"));
        assert!(harmless_value("RUSTFLAGS", "-Ctarget-cpu=native"));
        assert!(!harmless_value("RUSTFLAGS", "-C linker=/tmp/x"));
        assert!(!harmless_value("RUSTFLAGS", "-Clink-arg=-fuse-ld=x"));
        assert!(harmless_value("RUSTFLAGS", "-Zsanitizer=address"));
        assert!(harmless_value("RUSTFLAGS", "--cfg=compiletests"));
        assert!(!harmless_value("RUSTFLAGS", "-Zcodegen-backend=./x.so"));
        assert!(harmless_value("PATH", "$PATH:`pwd`/target/release/"));
        assert!(is_risky_variable("CARGO_TARGET_X_LINKER"));
        assert!(is_risky_variable("CARGO_HOME"));
        assert!(!is_risky_variable("CARGO_TERM_COLOR"));
        assert!(!is_risky_variable("CARGO_TARGET_DIR"));
        assert!(!is_risky_variable("CARGO_CMD"));
        assert!(harmless_value("PATH", "$PATH:$(pwd)/target/release"));
        assert!(harmless_value("PATH", "${PATH}:$PWD/bin:$HOME/.cargo/bin"));
        assert!(!harmless_value("PATH", "$PWD/bin:$PATH"));
        assert!(!harmless_value("PATH", "/tmp"));
        assert!(!harmless_value("LD_PRELOAD", "x"));
        // PATH after its own: no substitution, no second PATH.
        assert!(!harmless_value("PATH", "$PATH:$(mktemp -d)"));
        assert!(!harmless_value("PATH", "$PATH:`mktemp -d`"));
        assert!(!harmless_value("PATH", "$PATH:/x:$PATH"));
        // rustc flags: `-Z` apart, and the short flags that take a value
        // attached; any other flag is not known harmless.
        assert!(harmless_value(
            "RUSTFLAGS",
            "-Z sanitizer=address -D warnings"
        ));
        assert!(!harmless_value("RUSTFLAGS", "-Z codegen-backend=./x.so"));
        assert!(!harmless_value("RUSTFLAGS", "-Lfoo"));
        assert!(!harmless_value("RUSTFLAGS", "x"));
        assert!(!harmless_value("RUSTFLAGS", "-x"));
        assert!(!harmless_value("RUSTFLAGS", "-Dwarnings -Lnative=/tmp"));
    }

    /// Each family of risky variables, each by the test that finds it.
    #[test]
    fn risky_variables() {
        for name in [
            "PATH",
            "MAKEFLAGS",
            "LD_PRELOAD",
            "GIT_SSH_COMMAND",
            "DYLD_INSERT_LIBRARIES",
            "BASH_FUNC_f%%",
            "npm_config_script_shell",
            "NPM_CONFIG_SCRIPT_SHELL",
            "CARGO_HOME",
            "CARGO_ENCODED_RUSTFLAGS",
            "CARGO_ENCODED_RUSTDOCFLAGS",
            "CARGO_BUILD_RUSTC_WRAPPER",
            "CARGO_ALIAS_B",
            "CARGO_REGISTRIES_X_CREDENTIAL_PROVIDER",
            "CARGO_REGISTRY_GLOBAL_CREDENTIAL_PROVIDERS",
            "CARGO_CREDENTIAL_PROVIDER",
            "CARGO_UNSTABLE_HOST_CONFIG",
            "CARGO_HOST_LINKER",
            "CARGO_TARGET_X_RUNNER",
            "CARGO_BUILD_RUSTFLAGS",
            "CARGO_BUILD_RUSTDOCFLAGS",
            "CARGO_PROFILE_DEV_LINKER",
            "CARGO_X_RUNNER",
            "CARGO_X_WRAPPER",
            "CARGO_TARGET_APPLIES_TO_HOST",
            "CARGO_HOST_FOO",
        ] {
            assert!(is_risky_variable(name), "{name}");
        }
        for name in [
            "FOO",
            "CARGO_TERM_COLOR",
            "CARGO_INCREMENTAL",
            "CARGO_TARGET_DIR",
            "GITHUB_SHA",
        ] {
            assert!(!is_risky_variable(name), "{name}");
        }
    }

    /// Variables whose value a tool runs, and the command it stands for.
    #[test]
    fn variables_that_name_a_program() {
        for name in [
            "CC",
            "RUSTC_WRAPPER",
            "PAGER",
            "GIT_EDITOR",
            "CARGO_TARGET_X_RUNNER",
        ] {
            assert!(names_a_program(name), "{name}");
        }
        for name in [
            "CARGO_TARGET_DIR",
            "X_RUNNER",
            "CARGO_TARGET_X_LINKER",
            "HOME",
        ] {
            assert!(!names_a_program(name), "{name}");
        }
        assert_eq!(runner_words("CC", "clang -m32"), ["clang", "-m32"]);
        assert_eq!(
            runner_words("CARGO_TARGET_X_RUNNER", "node --x"),
            ["node", "--x", "target"]
        );
    }
}
