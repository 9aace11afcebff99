//! Copy-on-write workspaces (issue 77): a task's view of its workspace is
//! an overlay of the original checkout instead of a copy of it.
//!
//! Copying a tree is bound by creating its files: 100,000 small files take
//! most of a minute on a CI disk, before the first tool call can run. An
//! overlay creates none. The original is the read-only lower layer; every
//! write lands in an upper folder in the temp folder, so what changed is
//! what the upper folder holds (O(changes) to read, not O(files)).
//!
//! **Where the overlay lives.** The runner's own tools (`read_file`,
//! `grep`, ...) and its commands must see the same tree, and the
//! supervisor decides commands' paths from the runner's namespace. So the
//! runner moves itself, first thing in `main` while it has one thread,
//! into a mount namespace of its own ([`init`]); the overlay is mounted
//! there at the copy's usual path, where the runner, its supervisor and
//! every command (whose private `/tmp` namespaces are copies of it) see
//! it. Nothing of it reaches the machine's namespace, and it goes with
//! the last process in the namespace, however the run ends. The other
//! ways (a helper process holding the namespace, reached through
//! `/proc/PID/root`; fuse-overlayfs) would each add a path translation
//! or a daemon to every file access.
//!
//! **What the view hides** is what a copy leaves out (ignored files,
//! `.git`, the output folder, what the policy denies reading): each is a
//! whiteout in the upper layer, made before the mount, at the top of what
//! it hides (one for `node_modules/`, not one per file).
//!
//! **When it is used:** as root (overlays need `CAP_SYS_ADMIN`) where the
//! kernel mounts one (not an overlay upper on an overlay, as in some
//! containers). Otherwise the workspace is a copy, and the transcript's
//! `workspace_view` and `runner doctor` say why.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

#[cfg(target_os = "linux")]
#[path = "linux.rs"]
mod os;
#[cfg(not(target_os = "linux"))]
#[path = "other.rs"]
mod os;

/// How tasks' workspaces are made (`--workspace-mode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum WorkspaceMode {
    /// An overlay where the machine allows it, else a copy.
    #[default]
    Auto,
    /// An overlay, or the task fails saying why not.
    Overlay,
    /// A copy of the files.
    Copy,
}

/// Why this process cannot mount overlays.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct NoOverlay(pub(crate) String);

struct Setup {
    requested: WorkspaceMode,
    namespace: Result<(), NoOverlay>,
}

static SETUP: OnceLock<Setup> = OnceLock::new();

/// Sets how this process makes workspaces, and for overlays moves it into
/// a mount namespace of its own. Call it while the process has one thread
/// (first thing in `main`): a thread's mount namespace is its own.
pub fn init(requested: WorkspaceMode) {
    let namespace = match requested {
        WorkspaceMode::Copy => Err(NoOverlay(
            "copies were asked for (--workspace-mode copy)".into(),
        )),
        _ => os::enter_own_mount_namespace(),
    };
    let _ = SETUP.set(Setup {
        requested,
        namespace,
    });
}

/// What a workspace may be made as in this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Choice {
    /// Try an overlay; `forced`: a failure fails the task.
    Overlay { forced: bool },
    /// A copy; why not an overlay (`None`: the process never asked).
    Copy(Option<String>),
    /// An overlay was asked for and cannot be had: why.
    Refused(String),
}

/// Why an overlay could not be mounted here, once one failed: the
/// process's later tasks go straight to copies.
static FAILED: OnceLock<String> = OnceLock::new();

/// Notes that an overlay could not be made (`e`), and returns why in
/// words. An unforced process makes copies from then on.
pub(crate) fn overlay_failed(e: &io::Error) -> String {
    let why = format!("no overlay could be mounted: {e}");
    FAILED.get_or_init(|| why.clone()).clone()
}

/// Whether `path` lies in a view this run mounted (an isolated child
/// agent's copy of its parent's workspace).
pub(crate) fn overlay_is_beneath(path: &Path) -> bool {
    crate::cleanup::within_mount(path)
}

/// What a workspace may be made as in this process.
pub(crate) fn choice() -> Choice {
    let Some(s) = SETUP.get() else {
        return Choice::Copy(None);
    };
    if let (Some(why), WorkspaceMode::Auto) = (FAILED.get(), s.requested) {
        return Choice::Copy(Some(why.clone()));
    }
    match (&s.namespace, s.requested) {
        (Ok(()), r) => Choice::Overlay {
            forced: r == WorkspaceMode::Overlay,
        },
        (Err(why), WorkspaceMode::Overlay) => Choice::Refused(why.to_string()),
        (Err(why), _) => Choice::Copy(Some(why.to_string())),
    }
}

/// What `runner doctor` says of tasks' copies here: `overlay ...` when
/// one was mounted (and taken away again), else `copy: why not`.
pub fn probe() -> String {
    match choice() {
        Choice::Copy(why) => {
            return format!("copy: {}", why.as_deref().unwrap_or("no overlay was tried"));
        }
        Choice::Refused(why) => return format!("copy: {why}"),
        Choice::Overlay { .. } => {}
    }
    let tried = (|| -> io::Result<()> {
        let lower = tempfile::Builder::new().prefix("runner-probe-").tempdir()?;
        let target = tempfile::Builder::new().prefix("runner-probe-").tempdir()?;
        std::fs::write(lower.path().join("f"), b"")?;
        let layers = Layers::new()?;
        layers.hide(lower.path(), "f")?;
        let mounted = layers.mount(lower.path(), target.path())?;
        let hidden = target.path().join("f").symlink_metadata().is_err();
        drop(mounted);
        match hidden {
            true => Ok(()),
            false => Err(io::Error::other("a whiteout did not hide its file")),
        }
    })();
    match tried {
        Ok(()) => "overlay (copy-on-write: nothing is copied, changes are read from the overlay's upper folder)".into(),
        Err(e) => format!("copy: no overlay could be mounted: {e}"),
    }
}

/// The upper and work folders of an overlay, in the temp folder; removed
/// (after the overlay is taken away) when dropped.
pub(crate) struct Layers {
    dir: tempfile::TempDir,
    _registered: crate::cleanup::Registered,
}

impl Layers {
    pub(crate) fn new() -> io::Result<Self> {
        let dir = tempfile::Builder::new().prefix("runner-ov-").tempdir()?;
        let registered = crate::cleanup::register(dir.path());
        std::fs::create_dir(dir.path().join("upper"))?;
        std::fs::create_dir(dir.path().join("work"))?;
        Ok(Self {
            dir,
            _registered: registered,
        })
    }

    /// Where every write lands.
    pub(crate) fn upper(&self) -> PathBuf {
        self.dir.path().join("upper")
    }

    /// Hides `rel` (a path of the lower layer) from the view: a whiteout
    /// in the upper layer, its folders made as the lower layer has them.
    /// Before the mount only.
    pub(crate) fn hide(&self, lower: &Path, rel: &str) -> io::Result<()> {
        let upper = self.upper();
        let mut made = upper.clone();
        let parts: Vec<&str> = rel.split('/').collect();
        for (i, part) in parts.iter().enumerate() {
            made.push(part);
            if i + 1 == parts.len() {
                break;
            }
            if made.symlink_metadata().is_err() {
                std::fs::create_dir(&made)?;
                // The view shows the upper folder's owner and mode.
                let below = lower.join(parts[..=i].join("/")).symlink_metadata()?;
                keep_owner_and_mode(&made, &below)?;
            }
        }
        os::whiteout(&made)
    }

    /// Mounts the view of `lower` at `target`.
    pub(crate) fn mount(self, lower: &Path, target: &Path) -> io::Result<Mounted> {
        let upper = self.upper();
        // The view's top folder is the upper one's: as the original.
        keep_owner_and_mode(&upper, &lower.symlink_metadata()?)?;
        os::mount_overlay(lower, &upper, &self.dir.path().join("work"), target)?;
        Ok(Mounted {
            _mount: crate::cleanup::register_mount(target),
            target: target.to_path_buf(),
            _layers: self,
        })
    }
}

#[cfg(unix)]
fn keep_owner_and_mode(path: &Path, like: &std::fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    std::os::unix::fs::lchown(path, Some(like.uid()), Some(like.gid()))?;
    crate::sys::set_mode(path, like.mode())
}

#[cfg(not(unix))]
fn keep_owner_and_mode(_path: &Path, _like: &std::fs::Metadata) -> io::Result<()> {
    Ok(())
}

/// A mounted view; taken away when dropped (before its layers go).
pub(crate) struct Mounted {
    target: PathBuf,
    /// Removed after the unmount (fields drop after `drop`).
    _layers: Layers,
    _mount: crate::cleanup::RegisteredMount,
}

impl Drop for Mounted {
    fn drop(&mut self) {
        if let Err(e) = crate::sys::unmount_detached(&self.target) {
            tracing::warn!("could not unmount {}: {e}", self.target.display());
        }
    }
}

/// What an upper layer holds, by path relative to its top (`.git`
/// folders left out: the views' own).
#[derive(Debug, Default)]
pub(crate) struct UpperScan {
    /// Files and links written (new or changed).
    pub files: Vec<String>,
    /// Whiteouts: what was removed from below.
    pub removed: Vec<String>,
    /// Folders removed from below and made again: nothing below shows.
    pub opaque: Vec<String>,
    /// Every folder of the upper layer (where the one below may be a
    /// file the task replaced by a folder).
    pub dirs: Vec<String>,
}

/// Reads an upper layer.
pub(crate) fn scan_upper(upper: &Path) -> io::Result<UpperScan> {
    let mut scan = UpperScan::default();
    let mut stack = vec![String::new()];
    while let Some(rel) = stack.pop() {
        for entry in std::fs::read_dir(upper.join(&rel))? {
            let entry = entry?;
            let name = entry.file_name();
            if name == ".git" {
                continue;
            }
            let child = match rel.as_str() {
                "" => name.to_string_lossy().into_owned(),
                r => format!("{r}/{}", name.to_string_lossy()),
            };
            let meta = entry.path().symlink_metadata()?;
            if meta.is_dir() {
                if os::is_opaque(&entry.path()) {
                    scan.opaque.push(child.clone());
                }
                scan.dirs.push(child.clone());
                stack.push(child);
            } else if os::is_whiteout(&meta) {
                scan.removed.push(child);
            } else if meta.is_file() || meta.file_type().is_symlink() {
                scan.files.push(child);
            }
        }
    }
    Ok(scan)
}
