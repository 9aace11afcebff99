//! `changes.diff` with a bound (issue 72): a 100 MB file written in the
//! workspace must not make a 100 MB diff that every CI step downloads.
//!
//! Files are rendered in order (but for one whose contents are over the
//! bound, which is never rendered). When the whole diff is over the
//! bound, a file's diff is kept whole unless it is large (over a tenth of
//! the bound: a binary patch, or a text diff) or the diff has reached the
//! bound; then its header is kept, as comment
//! lines (`# diff --git …`) so that what the diff holds still applies with
//! `git apply`, and one line says what was left out. The run's `--apply`
//! and `--push` use the whole change, never this text.

use runner_output::{DiffCut, LeftOut};

use super::diff::{FileChange, FileContent, render_file_diff};

/// The default bound (`--max-diff-bytes`): 10 MB.
pub const DEFAULT_MAX_DIFF_BYTES: u64 = 10 * 1024 * 1024;

/// The diff of `changes` (paths after `prefix`) within `max` bytes, and
/// what it left out when it had to; `None` when nothing was.
pub fn render_bounded_diff(
    changes: &[FileChange],
    prefix: &str,
    max: u64,
) -> (String, Option<DiffCut>) {
    let large = max / 10;
    // A file whose contents are over the bound is not rendered at all (a
    // 100 MB file's patch would take seconds to make): its size is its
    // contents'.
    let files: Vec<Rendered> = changes
        .iter()
        .map(|c| {
            let raw = side_len(c.old.as_ref()) + side_len(c.new.as_ref());
            if raw > max {
                Rendered::Large {
                    header: render_file_diff(&emptied(c), Some(prefix)),
                    bytes: raw,
                    binary: is_binary(c),
                }
            } else {
                Rendered::Whole(render_file_diff(c, Some(prefix)))
            }
        })
        .collect();
    let whole: u64 = files.iter().map(Rendered::bytes).sum();
    if whole <= max {
        return (files.iter().map(Rendered::text).collect(), None);
    }
    let mut out = String::new();
    let mut left_out = Vec::new();
    for (c, f) in changes.iter().zip(&files) {
        let bytes = f.bytes();
        let (why, f) = match f {
            Rendered::Large {
                header,
                binary: true,
                ..
            } => ("binary", header),
            Rendered::Large { header, .. } => ("large", header),
            Rendered::Whole(f) if f.contains("\nGIT binary patch\n") && bytes > large => {
                ("binary", f)
            }
            Rendered::Whole(f) if bytes > large => ("large", f),
            Rendered::Whole(f) if out.len() as u64 + bytes > max => ("over the bound", f),
            Rendered::Whole(f) => {
                out.push_str(f);
                continue;
            }
        };
        for line in header(f).filter(|l| !l.starts_with("index ")) {
            out.push_str("# ");
            out.push_str(line);
            out.push('\n');
        }
        out.push_str(&format!(
            "# runner: {bytes} bytes of this file's diff left out ({why}; --max-diff-bytes {max}); --apply applies the whole change\n"
        ));
        left_out.push(LeftOut {
            path: c.path.clone(),
            bytes,
            why: why.to_string(),
        });
    }
    let cut = DiffCut {
        limit_bytes: max,
        whole_bytes: whole,
        files: left_out,
    };
    (out, Some(cut))
}

/// One file's diff: whole, or, for contents over the bound, its header
/// alone.
enum Rendered {
    Whole(String),
    Large {
        header: String,
        bytes: u64,
        binary: bool,
    },
}

impl Rendered {
    /// The diff's size, or the contents' where it was not rendered.
    fn bytes(&self) -> u64 {
        match self {
            Rendered::Whole(t) => t.len() as u64,
            Rendered::Large { bytes, .. } => *bytes,
        }
    }

    fn text(&self) -> &str {
        match self {
            Rendered::Whole(t) | Rendered::Large { header: t, .. } => t,
        }
    }
}

fn side_len(c: Option<&FileContent>) -> u64 {
    c.map_or(0, |c| c.bytes.len() as u64)
}

/// Whether either side is not text (a NUL in its first 8 KB, as git tells).
fn is_binary(c: &FileChange) -> bool {
    [c.old.as_ref(), c.new.as_ref()]
        .into_iter()
        .flatten()
        .any(|s| s.bytes.iter().take(8192).any(|b| *b == 0))
}

/// `c` with empty contents: what renders its header alone.
fn emptied(c: &FileChange) -> FileChange {
    let empty = |s: &Option<FileContent>| {
        s.as_ref().map(|s| FileContent {
            bytes: Vec::new(),
            mode: s.mode,
            symlink: s.symlink.clone(),
        })
    };
    FileChange {
        path: c.path.clone(),
        kind: c.kind,
        old: empty(&c.old),
        new: empty(&c.new),
        base_moved: c.base_moved,
    }
}

/// The header lines of one file's diff: up to its first hunk or patch.
fn header(file_diff: &str) -> impl Iterator<Item = &str> {
    file_diff.lines().take_while(|l| {
        !(l.starts_with("--- ")
            || l.starts_with("@@")
            || l.starts_with("GIT binary patch")
            || l.starts_with("Binary files"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::{ChangeKind, FileContent};

    fn added(path: &str, bytes: Vec<u8>) -> FileChange {
        FileChange {
            path: path.into(),
            kind: ChangeKind::Added,
            old: None,
            new: Some(FileContent {
                bytes,
                mode: 0o644,
                symlink: None,
            }),
            base_moved: false,
        }
    }

    #[test]
    fn a_diff_over_the_bound_keeps_headers_and_names_what_it_left_out() {
        let small = added("src/a.rs", b"fn a() {}\n".to_vec());
        let big = added("data/big.txt", "line\n".repeat(50_000).into_bytes());
        let blob = added(
            "data/blob.bin",
            (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect(),
        );
        let changes = [small.clone(), big, blob];
        // Under the bound: the whole diff, as before.
        let (whole, cut) = render_bounded_diff(&changes, "", u64::MAX);
        assert!(cut.is_none());
        // Over it: the small file whole, the large ones by their headers.
        let (text, cut) = render_bounded_diff(&changes, "", 100_000);
        let cut = cut.unwrap();
        assert!(text.len() < 2_000, "{}", text.len());
        assert!(text.contains("+fn a() {}"), "{text}");
        assert!(text.contains("# diff --git a/data/big.txt b/data/big.txt\n"));
        assert!(text.contains("# new file mode 100644\n"));
        let names: Vec<(&str, &str)> = (cut.files.iter())
            .map(|f| (f.path.as_str(), f.why.as_str()))
            .collect();
        assert_eq!(
            names,
            [("data/big.txt", "large"), ("data/blob.bin", "binary")]
        );
        // Its size: the rendered files', and the large ones' contents.
        assert!(
            cut.whole_bytes >= 450_000 && whole.len() > 450_000,
            "{}",
            cut.whole_bytes
        );
        assert_eq!(cut.limit_bytes, 100_000);
        // What it holds still applies: git reads the comments as text
        // between patches.
        let d = tempfile::tempdir().unwrap();
        let ok = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(d.path())
            .status()
            .unwrap();
        assert!(ok.success());
        std::fs::write(d.path().join("p.diff"), &text).unwrap();
        let out = std::process::Command::new("git")
            .args(["apply", "p.diff"])
            .current_dir(d.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            std::fs::read_to_string(d.path().join("src/a.rs")).unwrap(),
            "fn a() {}\n"
        );
        assert!(!d.path().join("data").exists());
        // Once the bound is reached, later files are cut too.
        let many: Vec<FileChange> = (0..50)
            .map(|i| added(&format!("f{i}.txt"), "x\n".repeat(1_000).into_bytes()))
            .collect();
        let (_, cut) = render_bounded_diff(&many, "", 50_000);
        let cut = cut.unwrap();
        assert!(cut.files.iter().all(|f| f.why == "over the bound"));
        assert!(cut.files.len() > 20 && cut.files.len() < 50);
    }
}
