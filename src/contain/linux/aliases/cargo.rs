//! Cargo's aliases, read as cargo reads them, for the exec wall.
//!
//! With `[alias] ship = "publish"` in a `.cargo/config.toml`, `cargo
//! ship` publishes with no exec of `cargo publish` for the wall to see.
//!
//! **Where cargo finds aliases** (its configuration's hierarchy): the
//! `alias` table of `.cargo/config.toml` and `.cargo/config` in the
//! process's folder and every folder above it, of `$CARGO_HOME/config.toml`
//! (`$HOME/.cargo`), of each `--config KEY=VALUE` or `--config FILE`, and
//! the environment's `CARGO_ALIAS_<NAME>`, with the environment the exec
//! gives cargo. An alias is a string of words or a list of them, and may
//! name another alias. Every definition found is a reading, whichever
//! cargo would take (one file's over another's): never looser.
//!
//! **Which word.** Any word before `--` that is no option may be the
//! subcommand (an option's value is passed over by the rule's match, as
//! the analysis does), so each one an alias names is read expanded.
//!
//! **Fails closed.** What cannot be read as cargo would is an error, and
//! the exec is refused by the rule: a file that is not TOML or too big,
//! an alias that is neither words nor a list of them, an `include` (more
//! files), cargo's `-C` (another folder), aliases nested past
//! [`MAX_DEPTH`], over [`MAX_READINGS`] readings or one longer than an
//! exec's argv may be.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::config_file::{MAX_DEPTH, MAX_READINGS, Parsed, Unreadable, bounded, read_file, var};

/// One configuration's aliases: each name with its expansion.
type Found = Vec<(String, Vec<String>)>;

/// The configuration files read, by their text.
static PARSED: Parsed<Found> = Parsed::new();

/// The aliases cargo may expand: each configuration's.
#[derive(Debug, Default)]
struct Aliases {
    found: Vec<Arc<Found>>,
    /// The environment's `CARGO_ALIAS_*` variables, by variable name.
    env: Vec<(String, String)>,
}

impl Aliases {
    /// Every expansion of `word`.
    fn of(&self, word: &str) -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = self
            .found
            .iter()
            .flat_map(|f| f.iter())
            .filter(|(n, _)| n == word)
            .map(|(_, e)| e.clone())
            .collect();
        let key = format!("CARGO_ALIAS_{}", word.to_uppercase().replace('-', "_"));
        out.extend(
            self.env
                .iter()
                .filter(|(k, _)| *k == key)
                .map(|(_, v)| v.split_whitespace().map(str::to_string).collect()),
        );
        out
    }

    /// The `alias` table of a `--config KEY=VALUE`.
    fn add_table(&mut self, table: &toml::Table) -> Result<(), Unreadable> {
        self.found
            .push(Arc::new(aliases_of(table, Path::new("--config"))?));
        Ok(())
    }

    /// A configuration file, if there is one.
    fn add_file(&mut self, path: &Path) -> Result<(), Unreadable> {
        let Some(text) = read_file(path)? else {
            return Ok(());
        };
        self.found.push(PARSED.of(&text, |text| {
            let table: toml::Table = text.parse().map_err(|e| {
                Unreadable(format!(
                    "{} is not TOML cargo can read: {e}",
                    path.display()
                ))
            })?;
            aliases_of(&table, path)
        })?);
        Ok(())
    }

    /// Whether no alias was found.
    fn is_empty(&self) -> bool {
        self.found.iter().all(|f| f.is_empty()) && self.env.is_empty()
    }
}

/// The `alias` table of one configuration, `from` a file or `--config`.
fn aliases_of(table: &toml::Table, from: &Path) -> Result<Found, Unreadable> {
    if table.contains_key("include") {
        return Err(Unreadable(format!(
            "{} includes other files",
            from.display()
        )));
    }
    let Some(aliases) = table.get("alias") else {
        return Ok(Found::new());
    };
    let Some(aliases) = aliases.as_table() else {
        return Err(Unreadable(format!(
            "{}: `alias` is not a table",
            from.display()
        )));
    };
    let mut found = Found::new();
    for (name, value) in aliases {
        let words = match value {
            toml::Value::String(s) => s.split_whitespace().map(str::to_string).collect(),
            toml::Value::Array(a) => a
                .iter()
                .map(|w| w.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| {
                    Unreadable(format!("{}: alias.{name} is not words", from.display()))
                })?,
            _ => {
                return Err(Unreadable(format!(
                    "{}: alias.{name} is not words",
                    from.display()
                )));
            }
        };
        found.push((name.clone(), words));
    }
    Ok(found)
}

/// The aliases cargo, run with `args` in folder `cwd` with environment
/// `env`, may expand.
fn read(args: &[String], cwd: &Path, env: &[String]) -> Result<Aliases, Unreadable> {
    let mut aliases = Aliases::default();
    for dir in cwd.ancestors() {
        for name in [".cargo/config.toml", ".cargo/config"] {
            aliases.add_file(&dir.join(name))?;
        }
    }
    let home = var(env, "CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| var(env, "HOME").map(|h| Path::new(h).join(".cargo")));
    if let Some(home) = home {
        let home = cwd.join(home);
        aliases.add_file(&home.join("config.toml"))?;
        aliases.add_file(&home.join("config"))?;
    }
    let mut i = 0;
    while i < args.len() && args[i] != "--" {
        let a = &args[i];
        let value = match a.strip_prefix("--config") {
            Some("") => {
                i += 1;
                args.get(i).map(String::as_str)
            }
            Some(v) => v.strip_prefix('='),
            None => None,
        };
        if let Some(v) = value {
            // `KEY=VALUE` is TOML; anything else names a file.
            match v.parse::<toml::Table>() {
                Ok(table) => aliases.add_table(&table)?,
                Err(_) => aliases.add_file(&cwd.join(v))?,
            }
        } else if a == "-C" || a.starts_with("-C") && !a.starts_with("--") {
            return Err(Unreadable(
                "`cargo -C` reads its configuration from another folder".into(),
            ));
        }
        i += 1;
    }
    aliases.env = env
        .iter()
        .filter_map(|e| e.split_once('='))
        .filter(|(k, _)| k.starts_with("CARGO_ALIAS_"))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Ok(aliases)
}

/// The other ways cargo may read `words` (`cargo` and its arguments), run
/// in `cwd` with `env`: each with one word an alias names expanded (and
/// the alias it expands to in turn). Empty when no alias applies; an
/// error (why) when the aliases cannot be read as cargo would.
pub(super) fn readings(
    words: &[String],
    cwd: &Path,
    env: &[String],
) -> Result<Vec<Vec<String>>, Unreadable> {
    let args = words.get(1..).unwrap_or_default();
    let aliases = read(args, cwd, env)?;
    if aliases.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = BTreeSet::new();
    let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
    for at in 1..=end {
        let w = &words[at];
        if w.starts_with(['-', '+']) {
            continue;
        }
        expand(words, at, &aliases, 0, &mut out)?;
    }
    Ok(out.into_iter().collect())
}

/// Adds to `out` each reading of `words` with the alias at `at` expanded,
/// and the expansion's own first word in turn.
fn expand(
    words: &[String],
    at: usize,
    aliases: &Aliases,
    depth: usize,
    out: &mut BTreeSet<Vec<String>>,
) -> Result<(), Unreadable> {
    for expansion in aliases.of(&words[at]) {
        if depth == MAX_DEPTH {
            return Err(Unreadable(format!(
                "cargo aliases nested over {MAX_DEPTH} deep"
            )));
        }
        let mut read = words[..at].to_vec();
        read.extend(expansion.iter().cloned());
        read.extend(words[at + 1..].iter().cloned());
        let read = bounded(read, "cargo")?;
        if !out.insert(read.clone()) {
            continue;
        }
        if out.len() > MAX_READINGS {
            return Err(Unreadable(format!(
                "over {MAX_READINGS} readings of cargo's aliases"
            )));
        }
        if !expansion.is_empty() {
            expand(&read, at, aliases, depth + 1, out)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::config_file::MAX_FILE_BYTES;
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn joined(r: Result<Vec<Vec<String>>, Unreadable>) -> Vec<String> {
        r.unwrap().iter().map(|w| w.join(" ")).collect()
    }

    #[test]
    fn aliases_are_read_from_every_place_cargo_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let sub = d.join("a/b");
        std::fs::create_dir_all(sub.join(".cargo")).unwrap();
        std::fs::create_dir_all(d.join("a/.cargo")).unwrap();
        std::fs::create_dir_all(d.join("home/.cargo")).unwrap();
        std::fs::write(
            sub.join(".cargo/config.toml"),
            "[alias]\nship = \"publish --dry-run\"\n",
        )
        .unwrap();
        // A folder above, without the extension; a list; a dotted key.
        std::fs::write(
            d.join("a/.cargo/config"),
            "alias.up = [\"publish\", \"--no-verify\"]\n[build]\njobs = 1\n",
        )
        .unwrap();
        std::fs::write(
            d.join("home/.cargo/config.toml"),
            "[alias]\nh = \"publish\"\n",
        )
        .unwrap();
        let home = format!("HOME={}", d.join("home").display());
        let env = strings(&[&home, "CARGO_ALIAS_E_X=publish", "PATH=/bin"]);
        let r = |s: &str| joined(readings(&words(s), &sub, &env));
        assert_eq!(r("cargo ship"), ["cargo publish --dry-run"]);
        assert_eq!(r("cargo -v up x"), ["cargo -v publish --no-verify x"]);
        assert_eq!(r("cargo h"), ["cargo publish"]);
        // The environment's name: upper case, `-` as `_`.
        assert_eq!(r("cargo e-x"), ["cargo publish"]);
        // An option's value may be the subcommand's place: read too.
        assert_eq!(r("cargo --color ship"), ["cargo --color publish --dry-run"]);
        // After `--` and options: not a subcommand.
        assert!(r("cargo test -- ship").is_empty());
        assert!(r("cargo --ship").is_empty());
        assert!(r("cargo build").is_empty());
        // `CARGO_HOME` before `HOME`.
        let env = strings(&["CARGO_HOME=/nonexistent", &home]);
        assert!(joined(readings(&words("cargo h"), &sub, &env)).is_empty());
        // `--config`, as TOML or a file.
        std::fs::write(sub.join("more.toml"), "alias.m = \"publish\"\n").unwrap();
        let r = |s: &str| joined(readings(&words(s), &sub, &[]));
        assert_eq!(
            r("cargo --config alias.c=\"publish\" c"),
            ["cargo --config alias.c=\"publish\" publish"]
        );
        assert_eq!(
            r("cargo --config=alias.c=\"publish\" c"),
            ["cargo --config=alias.c=\"publish\" publish"]
        );
        assert_eq!(
            r("cargo --config more.toml m"),
            ["cargo --config more.toml publish"]
        );
    }

    /// A file rewritten with another alias of the same length, and its
    /// times set back to what they were, is read anew (its text is what
    /// is kept, not its inode, size or times).
    #[test]
    fn a_configuration_rewritten_in_place_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join(".cargo")).unwrap();
        let path = d.join(".cargo/config.toml");
        std::fs::write(
            &path,
            "[alias]
ship = \"build\"\n",
        )
        .unwrap();
        let r = || joined(readings(&words("cargo ship"), d, &[]));
        assert_eq!(r(), ["cargo build"]);
        let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
        let inode = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&path).unwrap());
        let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        std::io::Write::write_all(&mut file, b"[alias]\nship = \"pub1x\"\n").unwrap();
        file.set_modified(modified).unwrap();
        drop(file);
        let now = std::fs::metadata(&path).unwrap();
        assert_eq!(std::os::unix::fs::MetadataExt::ino(&now), inode);
        assert_eq!(now.modified().unwrap(), modified);
        assert_eq!(r(), ["cargo pub1x"]);
    }

    #[test]
    fn an_alias_of_an_alias_is_read_through_and_a_cycle_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join(".cargo")).unwrap();
        std::fs::write(
            d.join(".cargo/config.toml"),
            "[alias]\na = \"b -x\"\nb = \"publish\"\nloop1 = \"loop2\"\nloop2 = \"loop1 y\"\nnone = []\n",
        )
        .unwrap();
        let r = |s: &str| readings(&words(s), d, &[]);
        assert_eq!(
            joined(r("cargo a z")),
            ["cargo b -x z", "cargo publish -x z"]
        );
        let e = r("cargo loop1").unwrap_err().to_string();
        assert!(e.contains("nested"), "{e}");
        assert_eq!(joined(r("cargo none x")), ["cargo x"]);
    }

    #[test]
    fn what_cannot_be_read_as_cargo_would_fails_closed() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join(".cargo")).unwrap();
        let config = d.join(".cargo/config.toml");
        for (text, why) in [
            ("[alias\n", "not TOML"),
            ("include = \"other.toml\"\n", "includes"),
            ("alias = 1\n", "not a table"),
            ("[alias]\nx = 1\n", "not words"),
            ("[alias]\nx = [\"a\", 1]\n", "not words"),
        ] {
            std::fs::write(&config, text).unwrap();
            let e = readings(&words("cargo build"), d, &[])
                .unwrap_err()
                .to_string();
            assert!(e.contains(why), "{text}: {e}");
        }
        std::fs::write(&config, "x".repeat(MAX_FILE_BYTES as usize + 1)).unwrap();
        let e = readings(&words("cargo build"), d, &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("bytes"), "{e}");
        std::fs::remove_file(&config).unwrap();
        for s in ["cargo -C sub ship", "cargo -Csub ship"] {
            let e = readings(&words(s), d, &[]).unwrap_err().to_string();
            assert!(e.contains("-C"), "{s}: {e}");
        }
        // After `--`, `-C` is the program's own (`cargo rustc -- -C x`).
        assert!(
            readings(&words("cargo rustc -- -C opt-level=3"), d, &[])
                .unwrap()
                .is_empty()
        );
        // Many ways to read one exec: refused past the bound.
        let many: String = (0..=MAX_READINGS)
            .map(|i| format!("a{i} = \"publish\"\n"))
            .collect();
        std::fs::write(&config, format!("[alias]\n{many}")).unwrap();
        let all: Vec<String> = (0..=MAX_READINGS).map(|i| format!("a{i}")).collect();
        let e = readings(&words(&format!("cargo {}", all.join(" "))), d, &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("readings"), "{e}");
        // A reading that grows past what an exec's argv may be: refused.
        let long = "y".repeat(200_000);
        std::fs::write(&config, format!("[alias]\ngrow = \"grow {long}\"\n")).unwrap();
        let e = readings(&words("cargo grow"), d, &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("bytes"), "{e}");
        std::fs::write(&config, format!("[alias]\n{many}")).unwrap();
        // At the bound itself, read.
        let at_bound = &all[..MAX_READINGS];
        let r = readings(&words(&format!("cargo {}", at_bound.join(" "))), d, &[]);
        assert_eq!(r.unwrap().len(), MAX_READINGS);
    }
}
