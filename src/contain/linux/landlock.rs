//! Landlock, the sandbox's file-system, network and scope rules: the ABI
//! (include/uapi/linux/landlock.h), which version this kernel has, and the
//! ruleset a task's commands get (read everywhere but a hidden tree, write
//! in the task's folders, TCP only to the proxy's port, no signal or
//! abstract socket outside the task). Built in the runner; the child only
//! restricts itself with it ([`super::sandbox::Confinement::apply`]).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::contain::HiddenTree;

// Landlock's ABI (include/uapi/linux/landlock.h).
const ACCESS_FS_EXECUTE: u64 = 1 << 0;
const ACCESS_FS_WRITE_FILE: u64 = 1 << 1;
const ACCESS_FS_READ_FILE: u64 = 1 << 2;
const ACCESS_FS_READ_DIR: u64 = 1 << 3;
const ACCESS_FS_TRUNCATE: u64 = 1 << 14;
const ACCESS_FS_IOCTL_DEV: u64 = 1 << 15;
const ACCESS_NET_BIND_TCP: u64 = 1 << 0;
const ACCESS_NET_CONNECT_TCP: u64 = 1 << 1;
const CREATE_RULESET_VERSION: u32 = 1 << 0;
const RULE_PATH_BENEATH: libc::c_int = 1;
const RULE_NET_PORT: libc::c_int = 2;

#[repr(C)]
struct NetPortAttr {
    allowed_access: u64,
    port: u64,
}

/// ABI 6 scopes: no connecting to an abstract Unix socket, and no
/// signal, outside the process's own Landlock domain.
const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
const SCOPE_SIGNAL: u64 = 1 << 1;

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// The file-system rights Landlock knows at `abi`.
pub(super) fn fs_rights(abi: i32) -> u64 {
    let mut all = (1u64 << 13) - 1; // ABI 1: EXECUTE ..= MAKE_SYM
    if abi >= 2 {
        all |= 1 << 13; // REFER
    }
    if abi >= 3 {
        all |= ACCESS_FS_TRUNCATE;
    }
    if abi >= 5 {
        all |= ACCESS_FS_IOCTL_DEV;
    }
    all
}

/// Set (to anything) to act as if the kernel had no Landlock: how the tests
/// see what `best-effort` and `required` do on such kernels. It can only
/// make a run stricter (`required` fails) or as loose as `sandbox: off`.
pub const SIMULATE_NO_LANDLOCK: &str = "RUNNER_SIMULATE_NO_LANDLOCK";

/// Set to a version to act as if the kernel's Landlock were that old
/// (never newer than it is): how the tests see a kernel without Landlock's
/// network rules (ABI < 4). Like [`SIMULATE_NO_LANDLOCK`], it can only make
/// a run stricter.
pub const SIMULATE_LANDLOCK_ABI: &str = "RUNNER_SIMULATE_LANDLOCK_ABI";

/// Why this kernel offers no Landlock.
#[derive(Debug, Clone, thiserror::Error)]
pub enum NoLandlock {
    #[error("Landlock is unavailable ({SIMULATE_NO_LANDLOCK} is set)")]
    Simulated,
    #[error("the kernel has no Landlock")]
    NotInKernel,
    #[error("Landlock is disabled in this kernel")]
    Disabled,
    #[error("Landlock is unavailable: {0}")]
    Other(String),
}

/// The Landlock ABI version of this kernel, or why there is none.
pub fn landlock_abi() -> Result<i32, NoLandlock> {
    if std::env::var_os(SIMULATE_NO_LANDLOCK).is_some() {
        return Err(NoLandlock::Simulated);
    }
    // SAFETY: the documented version query: no attribute, size 0.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    if v >= 1 {
        let simulated = std::env::var(SIMULATE_LANDLOCK_ABI)
            .ok()
            .and_then(|s| s.parse::<i32>().ok())
            .filter(|s| *s >= 1);
        Ok(simulated.map_or(v as i32, |s| s.min(v as i32)))
    } else {
        let e = std::io::Error::last_os_error();
        Err(match e.raw_os_error() {
            Some(libc::ENOSYS) => NoLandlock::NotInKernel,
            Some(libc::EOPNOTSUPP) => NoLandlock::Disabled,
            _ => NoLandlock::Other(e.to_string()),
        })
    }
}

/// What commands get of the network.
pub(super) enum Net {
    On,
    Off,
    /// TCP connections to the proxy's port only.
    Proxy(u16),
    /// Off, because `network:` rules cannot be enforced on this kernel.
    OffForRules,
}

pub(super) fn build_ruleset(
    abi: i32,
    writable: &[PathBuf],
    hidden: &[&HiddenTree],
    net: &Net,
) -> std::io::Result<OwnedFd> {
    let all = fs_rights(abi);
    let attr = RulesetAttr {
        handled_access_fs: all,
        handled_access_net: match net {
            _ if abi < 4 => 0,
            Net::On => 0,
            Net::Off | Net::OffForRules => ACCESS_NET_BIND_TCP | ACCESS_NET_CONNECT_TCP,
            // Binding stays free (a test server a command starts), but
            // connecting to it, or anywhere but the proxy, does not.
            Net::Proxy(_) => ACCESS_NET_CONNECT_TCP,
        },
        // A command cannot signal the runner or any process outside its
        // task (`kill -9 $PPID`), nor reach a daemon's abstract socket.
        scoped: if abi >= 6 {
            SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        } else {
            0
        },
    };
    // Each ABI knows the fields up to its own: ABI 1-3 the first, 4-5 two.
    let size = match abi {
        6.. => std::mem::size_of::<RulesetAttr>(),
        4 | 5 => 2 * std::mem::size_of::<u64>(),
        _ => std::mem::size_of::<u64>(),
    };
    // SAFETY: a valid attribute of the size given.
    let fd = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, &attr, size, 0u32) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel returned a new descriptor (close-on-exec).
    let ruleset = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    let read =
        ACCESS_FS_EXECUTE | ACCESS_FS_READ_FILE | ACCESS_FS_READ_DIR | (all & ACCESS_FS_IOCTL_DEV);
    if hidden.is_empty() {
        add_rule(&ruleset, Path::new("/"), read)?;
    } else {
        // Folders stay listable everywhere; files are readable everywhere
        // but beneath the hidden roots, where only their exceptions are.
        add_rule(&ruleset, Path::new("/"), ACCESS_FS_READ_DIR)?;
        let roots: Vec<&Path> = hidden.iter().map(|h| h.root.as_path()).collect();
        grant_all_but(&ruleset, &roots, read)?;
        for keep in hidden.iter().flat_map(|h| &h.except) {
            // One that went meanwhile is simply not readable.
            let _ = add_rule(&ruleset, keep, read);
        }
    }
    let dev_null = ACCESS_FS_READ_FILE | ACCESS_FS_WRITE_FILE | (all & ACCESS_FS_TRUNCATE);
    add_rule(&ruleset, Path::new("/dev/null"), dev_null)?;
    for dir in writable {
        add_rule(&ruleset, dir, all)?;
    }
    if let Net::Proxy(port) = net
        && abi >= 4
    {
        // By port: Landlock has no address rules, so this is the port on
        // any address (see docs/network.md). Below ABI 4 the supervisor
        // alone decides connects.
        let attr = NetPortAttr {
            allowed_access: ACCESS_NET_CONNECT_TCP,
            port: u64::from(*port),
        };
        // SAFETY: a valid descriptor and attribute, as the ABI wants.
        let r = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset.as_raw_fd(),
                RULE_NET_PORT,
                &attr as *const NetPortAttr,
                0u32,
            )
        };
        if r != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(ruleset)
}

/// Grants `access` on everything but the `hidden` roots (and what lies
/// beneath them): on each entry of each folder on the way from `/` to a
/// root that is neither a root nor on the way to one. Symbolic links need
/// no rule (access through one is decided on its target), and an entry
/// that cannot be granted stays unreadable. A path created later beside a
/// hidden root is not granted: commands write only in their own folders,
/// so that costs them nothing they could have made.
fn grant_all_but(ruleset: &OwnedFd, hidden: &[&Path], access: u64) -> std::io::Result<()> {
    let on_the_way: std::collections::BTreeSet<&Path> = hidden
        .iter()
        .flat_map(|h| h.ancestors().skip(1))
        .filter(|a| !hidden.iter().any(|h| a.starts_with(h)))
        .collect();
    for folder in &on_the_way {
        // A folder that cannot be listed, or an entry that cannot be
        // opened, stays unreadable: stricter, never looser.
        for entry in std::fs::read_dir(folder).into_iter().flatten().flatten() {
            let path = entry.path();
            if on_the_way.contains(path.as_path())
                || hidden.contains(&path.as_path())
                || entry.file_type().is_ok_and(|t| t.is_symlink())
            {
                continue;
            }
            let _ = add_rule(ruleset, &path, access);
        }
    }
    Ok(())
}

fn add_rule(ruleset: &OwnedFd, path: &Path, access: u64) -> std::io::Result<()> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    let access = if file.metadata()?.is_dir() {
        access
    } else {
        // Rules on files take only the rights that apply to files.
        access
            & (ACCESS_FS_EXECUTE
                | ACCESS_FS_WRITE_FILE
                | ACCESS_FS_READ_FILE
                | ACCESS_FS_TRUNCATE
                | ACCESS_FS_IOCTL_DEV)
    };
    let attr = PathBeneathAttr {
        allowed_access: access,
        parent_fd: file.as_raw_fd(),
    };
    // SAFETY: valid descriptors and a packed attribute, as the ABI wants.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset.as_raw_fd(),
            RULE_PATH_BENEATH,
            &attr as *const PathBeneathAttr,
            0u32,
        )
    };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        return Err(std::io::Error::new(
            e.kind(),
            format!("{}: {e}", path.display()),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contain::{Confinement, SandboxSettings};

    #[test]
    fn rights_grow_with_the_abi() {
        assert_eq!(fs_rights(1), 0x1fff);
        assert_eq!(fs_rights(3), 0x7fff);
        assert_eq!(fs_rights(6), 0xffff);
    }

    #[test]
    fn a_hidden_tree_is_unreadable_but_its_exceptions_and_siblings_are_not() {
        use std::os::unix::process::CommandExt;
        if landlock_abi().is_err() {
            eprintln!("no Landlock on this kernel: nothing to check");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let hidden = root.join("original");
        std::fs::create_dir_all(hidden.join(".git/objects")).unwrap();
        std::fs::write(hidden.join(".env"), "SECRET").unwrap();
        std::fs::write(hidden.join(".git/objects/blob"), "OBJECT").unwrap();
        std::fs::write(root.join("beside"), "BESIDE").unwrap();
        // A named pipe beside it: opened for its rule without blocking
        // (O_PATH), where a plain open would wait for a writer forever.
        let fifo = std::ffi::CString::new(root.join("pipe").into_os_string().into_encoded_bytes())
            .unwrap();
        // SAFETY: a valid path string.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let tree = HiddenTree {
            root: hidden.clone(),
            except: vec![hidden.join(".git/objects")],
        };
        let (c, d) = Confinement::hiding(&SandboxSettings::default(), &[], Some(&tree)).unwrap();
        let c = std::sync::Arc::new(c.expect("landlock"));
        assert!(c.hides && d.contains("unreadable"), "{d}");
        let cat = |path: &Path| {
            let c = c.clone();
            let mut cmd = std::process::Command::new("cat");
            cmd.arg(path);
            // SAFETY: apply makes only system calls.
            unsafe {
                cmd.pre_exec(move || c.apply());
            }
            let out = cmd.output().unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        assert_eq!(cat(&hidden.join(".env")), "");
        assert_eq!(cat(&root.join("./original/../original/.env")), "");
        assert_eq!(cat(&hidden.join(".git/objects/blob")), "OBJECT");
        assert_eq!(cat(&root.join("beside")), "BESIDE");
        assert!(cat(Path::new("/etc/os-release")).contains("NAME"));
        // The runner itself is not confined.
        assert_eq!(
            std::fs::read_to_string(hidden.join(".env")).unwrap(),
            "SECRET"
        );
    }

    /// Which TCP connects from a thread restricted by the ruleset of
    /// `abi` and `net` succeed, one for each of `ports` (on 127.0.0.1).
    fn connects_under(abi: i32, net: Net, ports: [u16; 2]) -> [bool; 2] {
        std::thread::spawn(move || {
            // The ruleset alone, applied as a command's is (Landlock and
            // `no_new_privs` hold for this thread only).
            let c = Confinement {
                ruleset: Some(build_ruleset(abi, &[], &[], &net).unwrap()),
                ..Confinement::with_filter(Vec::new())
            };
            c.apply().unwrap();
            ports.map(|p| std::net::TcpStream::connect(("127.0.0.1", p)).is_ok())
        })
        .join()
        .unwrap()
    }

    /// From ABI 4 the ruleset confines TCP connects: through the proxy
    /// only to its port, with the network off to none. Before it Landlock
    /// has no network rules (the size given leaves the field out, and the
    /// seccomp filter is the wall).
    #[test]
    fn tcp_connects_are_confined_from_abi_4() {
        let Ok(real) = landlock_abi() else {
            eprintln!("no Landlock on this kernel: nothing to check");
            return;
        };
        let a = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let b = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let ports = [
            a.local_addr().unwrap().port(),
            b.local_addr().unwrap().port(),
        ];
        for abi in 1..=real.min(6) {
            let has_rules = abi >= 4;
            // (Before ABI 4 the proxy is not offered: `network:` rules
            // turn the network off instead, `Net::OffForRules`.)
            if has_rules {
                assert_eq!(
                    connects_under(abi, Net::Proxy(ports[0]), ports),
                    [true, false],
                    "ABI {abi}, through the proxy"
                );
            }
            assert_eq!(
                connects_under(abi, Net::Off, ports),
                [!has_rules, !has_rules],
                "ABI {abi}, off"
            );
            assert_eq!(
                connects_under(abi, Net::On, ports),
                [true, true],
                "ABI {abi}, on"
            );
        }
    }

    /// A kernel without Landlock is told by the version query's error:
    /// each error seen on a thread whose seccomp filter gives it (filters
    /// and `no_new_privs` hold per thread).
    #[test]
    fn a_kernel_without_landlock_is_named_by_the_querys_error() {
        use super::super::seccomp::{NR, Op::*, assemble};
        for (errno, want) in [
            (libc::ENOSYS, "the kernel has no Landlock"),
            (libc::EOPNOTSUPP, "Landlock is disabled in this kernel"),
            (libc::EINVAL, "Landlock is unavailable: Invalid argument"),
        ] {
            let got = std::thread::spawn(move || {
                let filter = assemble(&[
                    Load(NR),
                    IfEq(libc::SYS_landlock_create_ruleset as u32, "refuse"),
                    Ret(libc::SECCOMP_RET_ALLOW),
                    Label("refuse"),
                    Ret(libc::SECCOMP_RET_ERRNO | errno as u32),
                ]);
                Confinement::with_filter(filter).apply().unwrap();
                landlock_abi().map_err(|e| e.to_string())
            })
            .join()
            .unwrap();
            let got = got.expect_err("the query was refused");
            assert!(got.starts_with(want), "{errno}: {got}");
        }
    }

    #[test]
    fn the_file_system_root_and_the_home_folder_are_never_hidden() {
        assert!(!HiddenTree::is_hideable(Path::new("/")));
        if let Some(home) = std::env::var_os("HOME") {
            let home = PathBuf::from(home);
            assert!(!HiddenTree::is_hideable(&home));
            assert!(HiddenTree::is_hideable(&home.join("project")));
        }
    }
}
