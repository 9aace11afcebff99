//! Variables whose assignment changes what runs.
//!
//! `PATH=/tmp git status` runs whatever `/tmp/git` is; `LD_PRELOAD`,
//! `BASH_ENV`, `GIT_*`, pagers and editors load or run other programs, and
//! so do the wrappers, compilers and flags of build tools (`RUSTC_WRAPPER`,
//! `RUSTFLAGS`, `CARGO_*`, `CC`, `MAKEFLAGS`, `GOFLAGS`, `npm_config_*`). A
//! script that sets one cannot be checked by its words.

/// Variables whose assignment changes what a command runs or loads.
pub(super) fn is_risky_variable(name: &str) -> bool {
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
        || name.starts_with("CARGO_")
        || name.to_ascii_lowercase().starts_with("npm_config_")
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
            rest.map(|r| r.replace("$(pwd)", ""))
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

fn harmless_rustflags(value: &str) -> bool {
    let words: Vec<&str> = value.split_whitespace().collect();
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
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
        assert!(!harmless_value("RUSTFLAGS", "-Z unstable-options"));
        assert!(harmless_value("PATH", "$PATH:$(pwd)/target/release"));
        assert!(harmless_value("PATH", "${PATH}:$PWD/bin:$HOME/.cargo/bin"));
        assert!(!harmless_value("PATH", "$PWD/bin:$PATH"));
        assert!(!harmless_value("PATH", "/tmp"));
        assert!(!harmless_value("LD_PRELOAD", "x"));
    }
}
