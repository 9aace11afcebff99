//! What the alias readers share: a program's configuration file, read
//! within bounds, the environment it is given, and the bounds on the
//! readings an exec may have (the files and the exec are the task's to
//! write, so each bound is an input built to be slow to read, refused).

use std::io::Read;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The largest configuration file read.
pub(super) const MAX_FILE_BYTES: u64 = 1 << 20;
/// Most aliases read one inside another (a cycle ends here at the latest).
pub(super) const MAX_DEPTH: usize = 16;
/// Most readings of one exec.
pub(super) const MAX_READINGS: usize = 64;
/// The longest reading, its words' bytes together: what the kernel allows
/// an exec's argv and environment.
pub(super) const MAX_READING_BYTES: usize = 2 << 20;

/// A reading of `words`, refused when longer than [`MAX_READING_BYTES`].
pub(super) fn bounded(words: Vec<String>, program: &str) -> Result<Vec<String>, Unreadable> {
    let bytes: usize = words.iter().map(|w| w.len() + 1).sum();
    if bytes > MAX_READING_BYTES {
        return Err(too_long(program));
    }
    Ok(words)
}

/// Why a reading of `program`'s aliases is refused for its length (also
/// before it is built, where building it is the cost).
pub(super) fn too_long(program: &str) -> Unreadable {
    Unreadable(format!(
        "a reading of {program}'s aliases over {MAX_READING_BYTES} bytes"
    ))
}

/// Why a program's aliases cannot be read as it would read them.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(in crate::contain::os) struct Unreadable(pub(super) String);

/// A configuration file's text; None when there is none.
pub(super) fn read_file(path: &Path) -> Result<Option<String>, Unreadable> {
    let unreadable = |e: std::io::Error| Unreadable(format!("{}: {e}", path.display()));
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        // No such file, or a file where a folder of its path would be
        // (`.cargo` a file): the program finds none either.
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(None);
        }
        Err(e) => return Err(unreadable(e)),
    };
    let mut text = String::new();
    match file.take(MAX_FILE_BYTES + 1).read_to_string(&mut text) {
        Ok(_) => {}
        // A folder where a file was looked for: the program reads no alias
        // from it either.
        Err(e) if e.raw_os_error() == Some(libc::EISDIR) => return Ok(None),
        Err(e) => return Err(unreadable(e)),
    }
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(Unreadable(format!(
            "{} is over {MAX_FILE_BYTES} bytes",
            path.display()
        )));
    }
    Ok(Some(text))
}

/// How many files' readings [`Parsed`] keeps.
const KEPT: usize = 8;

/// What files were read as, kept by their text, so that a task's execs of
/// cargo or gh parse an unchanged configuration once rather than at each
/// exec (a 1 MiB `config.yml` is most of a second of YAML).
///
/// The text is the key, compared whole: a file is read at each exec (a
/// few hundred microseconds at the size bound) and parsed again whenever
/// a byte of it differs. Nothing about the file stands for its text (not
/// its inode, size or times, which a write may leave as they were), so a
/// kept reading is never a stale one. At most [`KEPT`] files are kept,
/// the least recently used dropped first; what fails to parse is not kept.
pub(super) struct Parsed<T> {
    kept: Mutex<Vec<(Arc<str>, Arc<T>)>>,
}

impl<T> Parsed<T> {
    pub(super) const fn new() -> Self {
        Self {
            kept: Mutex::new(Vec::new()),
        }
    }

    /// What `text` parses to: the reading kept for the same text, or
    /// `parse`'s, then kept.
    pub(super) fn of(
        &self,
        text: &str,
        parse: impl FnOnce(&str) -> Result<T, Unreadable>,
    ) -> Result<Arc<T>, Unreadable> {
        {
            let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(at) = kept.iter().position(|(t, _)| **t == *text) {
                let entry = kept.remove(at);
                let reading = entry.1.clone();
                kept.insert(0, entry);
                return Ok(reading);
            }
        }
        // Parsed with the lock let go: another task's exec need not wait.
        let reading = Arc::new(parse(text)?);
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.insert(0, (Arc::from(text), reading.clone()));
        kept.truncate(KEPT);
        Ok(reading)
    }
}

/// The value of `name` in `env` (`NAME=value` strings).
pub(super) fn var<'a>(env: &'a [String], name: &str) -> Option<&'a str> {
    env.iter()
        .filter_map(|e| e.split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What is no file is no configuration; what is one but cannot be
    /// read whole is refused, up to the size bound and not past it.
    #[test]
    fn a_file_is_read_within_its_bound_or_refused() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert_eq!(read_file(&d.join("none.toml")).unwrap(), None);
        // A folder where the file would be, or a file where a folder would.
        std::fs::create_dir(d.join("dir.toml")).unwrap();
        assert_eq!(read_file(&d.join("dir.toml")).unwrap(), None);
        std::fs::write(d.join("file"), "x").unwrap();
        assert_eq!(read_file(&d.join("file/config.toml")).unwrap(), None);
        // A link to itself, and bytes that are not UTF-8: refused.
        std::os::unix::fs::symlink("loop.toml", d.join("loop.toml")).unwrap();
        assert!(read_file(&d.join("loop.toml")).is_err());
        std::fs::write(d.join("bytes.toml"), b"a = \"\xff\"\n").unwrap();
        assert!(read_file(&d.join("bytes.toml")).is_err());
        // At the bound, read; one byte past it, refused.
        let at = "#".repeat(MAX_FILE_BYTES as usize);
        std::fs::write(d.join("at.toml"), &at).unwrap();
        assert_eq!(
            read_file(&d.join("at.toml")).unwrap().map(|t| t.len()),
            Some(at.len())
        );
        std::fs::write(d.join("past.toml"), format!("{at}#")).unwrap();
        let e = read_file(&d.join("past.toml")).unwrap_err().to_string();
        assert!(e.contains("bytes"), "{e}");
    }

    /// A text is parsed once while it is kept; a text differing by a byte
    /// is parsed again; a failure is not kept; past the bound, the least
    /// recently used text goes first.
    #[test]
    fn a_reading_is_kept_by_its_whole_text() {
        let parsed: Parsed<String> = Parsed::new();
        let calls = std::cell::Cell::new(0);
        let parse = |t: &str| {
            calls.set(calls.get() + 1);
            match t {
                "bad" => Err(Unreadable("bad".into())),
                _ => Ok(t.to_uppercase()),
            }
        };
        assert_eq!(*parsed.of("ship = 1", parse).unwrap(), "SHIP = 1");
        assert_eq!(*parsed.of("ship = 1", parse).unwrap(), "SHIP = 1");
        assert_eq!(calls.get(), 1);
        // The same length, one byte apart.
        assert_eq!(*parsed.of("ship = 2", parse).unwrap(), "SHIP = 2");
        assert_eq!(calls.get(), 2);
        assert!(parsed.of("bad", parse).is_err());
        assert!(parsed.of("bad", parse).is_err());
        assert_eq!(calls.get(), 4);
        // "ship = 1" used last: it stays while KEPT others come and go,
        // but "ship = 2" is dropped.
        for i in 0..KEPT - 1 {
            parsed.of(&i.to_string(), parse).unwrap();
            parsed.of("ship = 1", parse).unwrap();
        }
        assert_eq!(calls.get(), 4 + KEPT - 1);
        parsed.of("ship = 2", parse).unwrap();
        assert_eq!(calls.get(), 4 + KEPT);
    }
}
