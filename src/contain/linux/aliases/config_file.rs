//! A program's configuration file, read within bounds, and the
//! environment it is given: what the alias readers share.

use std::io::Read;
use std::path::Path;

/// The largest configuration file read.
pub(super) const MAX_FILE_BYTES: u64 = 1 << 20;

/// Why a program's aliases cannot be read as it would read them.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(in crate::contain::os) struct Unreadable(pub(super) String);

/// A configuration file's text; None when there is none.
pub(super) fn read_file(path: &Path) -> Result<Option<String>, Unreadable> {
    let unreadable = |e: std::io::Error| Unreadable(format!("{}: {e}", path.display()));
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
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
