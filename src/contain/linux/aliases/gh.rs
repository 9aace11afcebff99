//! The GitHub CLI's aliases, read as gh reads them.
//!
//! `gh alias set m 'pr merge'` writes `aliases: {m: pr merge}` to gh's
//! `config.yml`, and `gh m 1` then runs `gh pr merge 1` in the same
//! process. gh looks for the file in `$GH_CONFIG_DIR`, else
//! `$XDG_CONFIG_HOME/gh`, else `~/.config/gh`, with the environment the
//! exec gives it; every one of them that holds a `config.yml` is read
//! here, so whichever gh takes is among the readings.
//!
//! **Expansion, as gh does it.** The alias is gh's first argument. Each
//! argument after it replaces `$1`, `$2`, ... in the expansion while the
//! expansion holds a `$`, and is appended otherwise; the expansion is then
//! split into words. A shell alias (`!...`) runs `sh -c`, an exec the wall
//! decides in turn, and is not read here. An expansion naming another
//! alias is read through, up to [`MAX_DEPTH`]; past [`MAX_READINGS`]
//! readings, or one longer than [`MAX_READING_BYTES`] (`$1` a thousand
//! times over a long argument), the exec is refused.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use runner_policy::words::split_words;

use super::config_file::{
    MAX_DEPTH, MAX_READING_BYTES, MAX_READINGS, Parsed, Unreadable, bounded, read_file, too_long,
    var,
};

/// What of gh's `config.yml` is read: its aliases.
#[derive(serde::Deserialize)]
struct Config {
    #[serde(default)]
    aliases: Option<BTreeMap<String, String>>,
}

/// The folders gh may take its configuration from.
fn config_dirs(cwd: &Path, env: &[String]) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(d) = var(env, "GH_CONFIG_DIR").filter(|d| !d.is_empty()) {
        dirs.push(cwd.join(d));
    }
    if let Some(d) = var(env, "XDG_CONFIG_HOME").filter(|d| !d.is_empty()) {
        dirs.push(cwd.join(d).join("gh"));
    }
    if let Some(h) = var(env, "HOME").filter(|h| !h.is_empty()) {
        dirs.push(cwd.join(h).join(".config/gh"));
    }
    dirs
}

/// A `config.yml`'s aliases, by name.
type Aliases = BTreeMap<String, String>;

/// The configurations read, by their text.
static PARSED: Parsed<Aliases> = Parsed::new();

/// The aliases of each configuration found.
fn read(cwd: &Path, env: &[String]) -> Result<Vec<Arc<Aliases>>, Unreadable> {
    let mut found = Vec::new();
    for dir in config_dirs(cwd, env) {
        let path = dir.join("config.yml");
        let Some(text) = read_file(&path)? else {
            continue;
        };
        if text.trim().is_empty() {
            continue;
        }
        found.push(PARSED.of(&text, |text| {
            let config: Config = serde_saphyr::from_str(text).map_err(|e| {
                Unreadable(format!(
                    "{} is not a configuration gh can read: {e}",
                    path.display()
                ))
            })?;
            Ok(config.aliases.unwrap_or_default())
        })?);
    }
    Ok(found)
}

/// The other ways gh may read `words` (`gh` and its arguments), run in
/// `cwd` with `env`: each with its alias expanded.
pub(super) fn readings(
    words: &[String],
    cwd: &Path,
    env: &[String],
) -> Result<Vec<Vec<String>>, Unreadable> {
    if words.len() < 2 {
        return Ok(Vec::new());
    }
    let aliases = read(cwd, env)?;
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut pending = vec![(words.to_vec(), 0)];
    while let Some((read, depth)) = pending.pop() {
        for expansion in aliases.iter().filter_map(|a| a.get(&read[1])) {
            if expansion.starts_with('!') {
                continue;
            }
            if depth == MAX_DEPTH {
                return Err(Unreadable(format!(
                    "gh aliases nested over {MAX_DEPTH} deep"
                )));
            }
            let expanded = expand(&read, expansion)?;
            if expanded.len() >= 2 && !out.contains(&expanded) {
                if out.len() == MAX_READINGS {
                    return Err(Unreadable(format!(
                        "over {MAX_READINGS} readings of gh's aliases"
                    )));
                }
                out.push(expanded.clone());
                pending.push((expanded, depth + 1));
            }
        }
    }
    Ok(out)
}

/// `words` with its alias (`words[1]`) replaced by `expansion`, as gh
/// does it; refused when it would grow past [`MAX_READING_BYTES`].
fn expand(words: &[String], expansion: &str) -> Result<Vec<String>, Unreadable> {
    let mut expansion = expansion.to_string();
    let mut extra = Vec::new();
    for (i, a) in words[2..].iter().enumerate() {
        if expansion.contains('$') {
            let placeholder = format!("${}", i + 1);
            let times = expansion.matches(placeholder.as_str()).count();
            if expansion.len() + times * a.len() > MAX_READING_BYTES {
                return Err(too_long("gh"));
            }
            expansion = expansion.replace(&placeholder, a);
        } else {
            extra.push(a.clone());
        }
    }
    let mut out = vec![words[0].clone()];
    out.extend(split_words(&expansion));
    out.extend(extra);
    bounded(out, "gh")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn aliases_are_read_and_expanded_as_gh_does() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("home/.config/gh")).unwrap();
        std::fs::create_dir_all(d.join("xdg/gh")).unwrap();
        std::fs::create_dir_all(d.join("ghdir")).unwrap();
        std::fs::write(
            d.join("home/.config/gh/config.yml"),
            "git_protocol: https\naliases:\n    m: pr merge\n    co: pr checkout $1 --force\n    sh: '!gh pr merge $1'\n    mm: m --admin\n",
        )
        .unwrap();
        std::fs::write(d.join("xdg/gh/config.yml"), "aliases:\n    x: pr merge\n").unwrap();
        std::fs::write(
            d.join("ghdir/config.yml"),
            "aliases:\n    g: \"pr 'merge'\"\n",
        )
        .unwrap();
        let env: Vec<String> = vec![
            format!("HOME={}", d.join("home").display()),
            format!("XDG_CONFIG_HOME={}", d.join("xdg").display()),
            "GH_CONFIG_DIR=ghdir".to_string(),
        ];
        let r = |s: &str| -> Vec<String> {
            readings(&words(s), d, &env)
                .unwrap()
                .iter()
                .map(|w| w.join(" "))
                .collect()
        };
        assert_eq!(r("gh m 1"), ["gh pr merge 1"]);
        assert_eq!(r("gh co 7 -R o/r"), ["gh pr checkout 7 --force -R o/r"]);
        assert_eq!(r("gh x"), ["gh pr merge"]);
        // Quotes in the expansion group words; a relative GH_CONFIG_DIR is
        // from the process's folder.
        assert_eq!(r("gh g"), ["gh pr merge"]);
        // An alias of an alias.
        assert_eq!(r("gh mm 2"), ["gh m --admin 2", "gh pr merge --admin 2"]);
        // A shell alias runs `sh -c`, decided as its own exec.
        assert!(r("gh sh 1").is_empty());
        // Only gh's first argument is an alias.
        assert!(r("gh pr m").is_empty());
        assert!(r("gh").is_empty());
    }

    #[test]
    fn what_gh_could_not_read_fails_closed() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let env = vec![format!("GH_CONFIG_DIR={}", d.display())];
        for text in ["aliases: [a, b]\n", "aliases:\n  m: [pr, merge]\n", "{"] {
            std::fs::write(d.join("config.yml"), text).unwrap();
            let e = readings(&words("gh m"), d, &env).unwrap_err().to_string();
            assert!(e.contains("not a configuration gh can read"), "{text}: {e}");
        }
        // A cycle ends where a reading repeats; a chain past the bound
        // is refused.
        std::fs::write(d.join("config.yml"), "aliases:\n  a: b\n  b: a\n").unwrap();
        assert_eq!(readings(&words("gh a"), d, &env).unwrap().len(), 2);
        let chain: String = (0..=MAX_DEPTH)
            .map(|i| format!("  a{i}: a{} x\n", i + 1))
            .collect();
        std::fs::write(d.join("config.yml"), format!("aliases:\n{chain}")).unwrap();
        let e = readings(&words("gh a0"), d, &env).unwrap_err().to_string();
        assert!(e.contains("nested"), "{e}");
        // Many ways to read one exec (each name defined in three places,
        // four deep), or one that grows past an argv's bound: refused.
        let xdg = d.join("xdg");
        let home = d.join("home");
        for (i, dir) in [d.to_path_buf(), xdg.join("gh"), home.join(".config/gh")]
            .iter()
            .enumerate()
        {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(
                dir.join("config.yml"),
                format!("aliases:\n  a: b {i}\n  b: c {i}\n  c: e {i}\n  e: pr merge {i}\n"),
            )
            .unwrap();
        }
        let three = vec![
            env[0].clone(),
            format!("XDG_CONFIG_HOME={}", xdg.display()),
            format!("HOME={}", home.display()),
        ];
        let e = readings(&words("gh a"), d, &three).unwrap_err().to_string();
        assert!(e.contains("readings"), "{e}");
        std::fs::write(
            d.join("config.yml"),
            format!("aliases:\n  m: pr merge{}\n", " $1".repeat(1000)),
        )
        .unwrap();
        let arg = "z".repeat(4096);
        let e = readings(&[words("gh m"), vec![arg]].concat(), d, &env)
            .unwrap_err()
            .to_string();
        assert!(e.contains("bytes"), "{e}");
        // An empty file, or none: no alias.
        std::fs::write(d.join("config.yml"), "\n").unwrap();
        assert!(readings(&words("gh m"), d, &env).unwrap().is_empty());
        std::fs::remove_file(d.join("config.yml")).unwrap();
        assert!(readings(&words("gh m"), d, &env).unwrap().is_empty());
    }
}
