//! Reading a stopped process's memory: the address a `connect` names, the
//! path and argv an `execve` names. Reads never cross into a page that may
//! not be mapped; what cannot be read is `None`, and the caller refuses.

/// Reads up to `buf.len()` bytes at `addr` of process `pid` into `buf`;
/// how many (0 on a fault).
pub(super) fn read_into(pid: u32, addr: u64, buf: &mut [u8]) -> usize {
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: one local buffer of its length; the remote side is checked
    // by the kernel.
    let n = unsafe { libc::process_vm_readv(pid as i32, &local, 1, &remote, 1, 0) };
    n.max(0) as usize
}

/// Reads exactly `len` bytes at `addr` of process `pid`.
pub(super) fn read_memory(pid: u32, addr: u64, len: usize) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; len];
    (read_into(pid, addr, &mut buf) == len).then_some(buf)
}

/// Most bytes of argv the supervisor reads (Linux's own limit is 2 MiB
/// with the environment); past it, the exec is refused.
const MAX_ARGV_BYTES: usize = 2 << 20;
/// Most arguments it reads.
const MAX_ARGS: usize = 1 << 17;

/// Reads the NUL-terminated string at `addr` of `pid`, up to `max` bytes.
pub(super) fn read_cstring(pid: u32, addr: u64, max: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = addr;
    while out.len() < max {
        // Up to the end of the page, so that a read never crosses into an
        // unmapped one.
        let room = 4096 - (at % 4096) as usize;
        let mut buf = vec![0u8; room];
        let n = read_into(pid, at, &mut buf);
        if n == 0 {
            return None;
        }
        let got = &buf[..n];
        if let Some(end) = got.iter().position(|b| *b == 0) {
            out.extend_from_slice(&got[..end]);
            return Some(out);
        }
        out.extend_from_slice(got);
        at += n as u64;
    }
    None
}

/// Reads a NULL-terminated array of string pointers (argv) of `pid`.
pub(super) fn read_argv(pid: u32, addr: u64) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut total = 0;
    if addr == 0 {
        return Some(out);
    }
    for i in 0..MAX_ARGS as u64 {
        let ptr = read_memory(pid, addr + 8 * i, 8)?;
        let ptr = u64::from_ne_bytes(ptr.try_into().ok()?);
        if ptr == 0 {
            return Some(out);
        }
        let s = read_cstring(pid, ptr, MAX_ARGV_BYTES - total)?;
        total += s.len() + 1;
        out.push(String::from_utf8_lossy(&s).into_owned());
    }
    None
}
