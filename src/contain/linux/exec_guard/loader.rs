//! The machine's dynamic loaders, for the exec wall: known by name and,
//! like a denied program, by inode and content
//! ([`super::ExecGuard::names`]), so that a copy of the loader under
//! another name is still the loader. What a loader's options ask of it is
//! the engine's (`runner_policy::programs::loader`), shared with the
//! analysis; what the wall adds is whether the program it is given could
//! be swapped after the wall looked ([`swappable`]).

use std::path::{Path, PathBuf};

pub use runner_policy::programs::loader::{LOADER, Loads, is_loader_name, reading};

/// The loaders on this machine: files named as loaders in the library
/// folders (and their architecture folders, one level down).
pub fn machine_loaders() -> &'static [PathBuf] {
    static FOUND: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    FOUND.get_or_init(scan)
}

/// [`machine_loaders`]' one look at the library folders.
fn scan() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for top in [
        "/lib",
        "/lib64",
        "/lib32",
        "/libx32",
        "/usr/lib",
        "/usr/lib64",
        "/usr/lib32",
    ] {
        let Ok(entries) = std::fs::read_dir(top) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            let name = e.file_name();
            let name = name.to_string_lossy();
            if is_loader_name(&name) {
                out.push(path);
            } else if name.contains("-linux-")
                && let Ok(inner) = std::fs::read_dir(&path)
            {
                out.extend(
                    inner
                        .flatten()
                        .filter(|i| is_loader_name(&i.file_name().to_string_lossy()))
                        .map(|i| i.path()),
                );
            }
        }
    }
    out
}

/// Why the file at `path` (absolute, as the process names it; `real`,
/// what it resolves to now) cannot be decided as the loader's program:
/// the loader opens it after the wall has looked, so a path the command
/// can change (under a folder it may write, or through `..`) could be
/// swapped in between. `None` when it cannot be.
pub fn swappable(path: &Path, real: &Path, writable: Option<&[PathBuf]>) -> Option<String> {
    let Some(writable) = writable else {
        return Some("commands may write anywhere here (no Landlock)".into());
    };
    if path
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Some(format!("{} goes through `..`", path.display()));
    }
    [path, real]
        .into_iter()
        .find(|p| writable.iter().any(|w| p.starts_with(w)))
        .map(|p| format!("{} is in a folder commands may write", p.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machine_has_a_loader() {
        // Every glibc or musl machine has one.
        assert!(!machine_loaders().is_empty());
    }

    #[test]
    fn a_program_the_command_could_swap_is_named() {
        let w = vec![PathBuf::from("/work/ws"), PathBuf::from("/tmp/t")];
        let p = Path::new;
        assert_eq!(
            swappable(p("/usr/bin/git"), p("/usr/bin/git"), Some(&w)),
            None
        );
        assert!(swappable(p("/tmp/t/g"), p("/tmp/t/g"), Some(&w)).is_some());
        // A link outside to a file inside, and the other way round.
        assert!(swappable(p("/usr/local/bin/g"), p("/work/ws/g"), Some(&w)).is_some());
        assert!(swappable(p("/usr/bin/../../tmp/t/g"), p("/usr/bin/git"), Some(&w)).is_some());
        assert!(swappable(p("/usr/bin/git"), p("/usr/bin/git"), None).is_some());
    }
}
