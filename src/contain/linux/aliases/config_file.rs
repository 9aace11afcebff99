//! What the alias readers share: a program's configuration file, read
//! within bounds, the environment it is given, and the bounds on the
//! readings an exec may have (the files and the exec are the task's to
//! write, so each bound is an input built to be slow to read, refused).

use std::io::Read;
use std::path::Path;

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
}
