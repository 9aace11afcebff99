//! What the rest of the crate needs from the operating system beyond std's
//! portable API (file modes, owners, inodes, process groups, signals,
//! locks), behind one API: `unix.rs` on Linux and macOS, `other.rs`
//! elsewhere (Windows), picked at build time. With `contain`'s `os`
//! modules, `pidfd` and `workspace::open`, these are the files that name
//! a platform.

#[cfg(unix)]
#[path = "unix.rs"]
mod imp;
#[cfg(not(unix))]
#[path = "other.rs"]
mod imp;

pub use imp::*;
