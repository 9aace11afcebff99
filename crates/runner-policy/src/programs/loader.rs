//! The dynamic loader run as a program: `ld.so [OPTIONS] PROG ARGS` maps
//! `PROG` itself, with no exec of its own, and runs it. So the analysis
//! decides it as `PROG ARGS`, and the exec wall does too (one table for
//! both). The options are read as glibc's `rtld.c` and musl's `ldso` read
//! them: each known option (with its value as the next word) is taken,
//! and the first other word is the program. `--list`, `--verify`,
//! `--help`, `--version` and the other listings run nothing, nor does
//! `LD_TRACE_LOADED_OBJECTS` in the environment (`ldd`'s way).

/// The name a loader goes by among an exec's names, whatever its file is
/// called.
pub const LOADER: &str = "ld.so";

/// Options that take the next word as their value.
const WITH_VALUE: &[&str] = &[
    "--library-path",
    "--inhibit-rpath",
    "--audit",
    "--preload",
    "--argv0",
    "--glibc-hwcaps-prefix",
    "--glibc-hwcaps-mask",
];

/// Options after which the loader runs no program.
const RUNS_NOTHING: &[&str] = &[
    "--list",
    "--verify",
    "--help",
    "--version",
    "--list-tunables",
    "--list-diagnostics",
];

/// Options that change nothing of what runs.
const PLAIN: &[&str] = &["--inhibit-cache"];

/// Whether `name` (a file's base name) is a loader's: glibc's
/// `ld-linux*.so.N`, `ld-*.so*` and `ld64.so.N`, musl's
/// `ld-musl-ARCH.so.1`, and `ld.so`.
pub fn is_loader_name(name: &str) -> bool {
    name == LOADER
        || (name.starts_with("ld-") && name.contains(".so"))
        || name.starts_with("ld64.so.")
}

/// What a loader is asked to do.
#[derive(Debug, PartialEq, Eq)]
pub enum Loads {
    /// List, verify, print help: no program runs.
    Nothing,
    /// Run a program.
    Program {
        /// The program's file, as named.
        program: String,
        /// Its argv: its `argv[0]` first (the `--argv0` given, else the
        /// program as named).
        argv: Vec<String>,
        /// Whether an option maps code of its own choosing into it
        /// (`--preload`, `--audit`, `--library-path`): what runs then is
        /// not only the program.
        maps_code: bool,
    },
}

/// What a loader's `argv` (its own `argv[0]` first) and environment ask
/// it to do.
pub fn reading(argv: &[String], env: &[String]) -> Loads {
    let mut i = 1;
    let mut argv0 = None;
    let mut maps_code = false;
    while let Some(word) = argv.get(i) {
        let (opt, inline) = match word.split_once('=') {
            Some((o, v)) if o.starts_with("--") => (o, Some(v)),
            _ => (word.as_str(), None),
        };
        if RUNS_NOTHING.contains(&opt) {
            return Loads::Nothing;
        }
        if PLAIN.contains(&opt) {
            i += 1;
            continue;
        }
        if WITH_VALUE.contains(&opt) {
            let value = match inline {
                Some(v) => {
                    i += 1;
                    Some(v.to_string())
                }
                None => {
                    i += 2;
                    argv.get(i - 1).cloned()
                }
            };
            if opt == "--argv0" {
                argv0 = value;
            }
            maps_code |= MAPS_CODE.contains(&opt);
            continue;
        }
        if word == "--" {
            i += 1;
        }
        break;
    }
    let tracing = env
        .iter()
        .any(|e| e.starts_with("LD_TRACE_LOADED_OBJECTS="));
    let Some(program) = argv.get(i) else {
        return Loads::Nothing;
    };
    if tracing {
        return Loads::Nothing;
    }
    let mut out = vec![argv0.unwrap_or_else(|| program.clone())];
    out.extend(argv[i + 1..].iter().cloned());
    Loads::Program {
        program: program.clone(),
        argv: out,
        maps_code,
    }
}

/// The options that map code into the program (a library path, a
/// preloaded library, an auditing one): what they map the analysis cannot
/// see into.
const MAPS_CODE: &[&str] = &["--library-path", "--preload", "--audit"];

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn a_loaders_options_are_read_as_the_loader_reads_them() {
        let program = |argv: &str, run: &str| Loads::Program {
            program: argv.to_string(),
            argv: words(run),
            maps_code: false,
        };
        let cases = [
            (
                "ld.so /usr/bin/git push origin",
                program("/usr/bin/git", "/usr/bin/git push origin"),
            ),
            (
                "ld.so --library-path /x --preload /y.so --inhibit-cache /usr/bin/git push",
                Loads::Program {
                    program: "/usr/bin/git".into(),
                    argv: words("/usr/bin/git push"),
                    maps_code: true,
                },
            ),
            (
                "ld.so --argv0 ls /usr/bin/git push",
                program("/usr/bin/git", "ls push"),
            ),
            (
                "ld.so --argv0=ls /usr/bin/git push",
                program("/usr/bin/git", "ls push"),
            ),
            (
                "ld.so -- /usr/bin/git push",
                program("/usr/bin/git", "/usr/bin/git push"),
            ),
            // An unknown option is the program, as rtld takes it.
            (
                "ld.so --frob /usr/bin/git",
                program("--frob", "--frob /usr/bin/git"),
            ),
            ("ld.so --list /usr/bin/git", Loads::Nothing),
            ("ld.so --verify /usr/bin/git", Loads::Nothing),
            ("ld.so --help", Loads::Nothing),
            ("ld.so", Loads::Nothing),
        ];
        for (argv, want) in cases {
            assert_eq!(reading(&words(argv), &[]), want, "{argv}");
        }
        // ldd's way of listing.
        let env = vec!["LD_TRACE_LOADED_OBJECTS=1".to_string()];
        assert_eq!(reading(&words("ld.so /usr/bin/git"), &env), Loads::Nothing);
    }

    #[test]
    fn loaders_are_known_by_name_and_found_on_the_machine() {
        for name in [
            "ld-linux-x86-64.so.2",
            "ld-linux-aarch64.so.1",
            "ld-2.31.so",
            "ld-musl-x86_64.so.1",
            "ld64.so.2",
            "ld.so",
        ] {
            assert!(is_loader_name(name), "{name}");
        }
        for name in ["ld", "ldd", "ldconfig", "lddtree", "gold"] {
            assert!(!is_loader_name(name), "{name}");
        }
    }
}
