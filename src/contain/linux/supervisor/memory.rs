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

/// Reads the NUL-terminated string at `addr` of `pid`, of at most `max`
/// bytes before its NUL (a longer one is `None`).
pub(super) fn read_cstring(pid: u32, addr: u64, max: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = addr;
    while out.len() <= max {
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
            return (out.len() <= max).then_some(out);
        }
        out.extend_from_slice(got);
        at += n as u64;
    }
    None
}

/// Reads a NULL-terminated array of string pointers (argv) of `pid`, up
/// to `most` strings (`None` for all): the pointers a page at a time,
/// each string up to its end.
pub(super) fn read_argv(pid: u32, addr: u64, most: Option<usize>) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut total = 0;
    if addr == 0 {
        return Some(out);
    }
    let most = most.unwrap_or(MAX_ARGS).min(MAX_ARGS);
    let mut at = addr;
    let mut page = [0u8; 4096];
    while out.len() < most {
        // The pointers up to the end of the page (one read for most argvs);
        // a pointer that straddles two pages (an array not 8-aligned) is
        // read across them, both of which it needs mapped.
        let room = (4096 - (at % 4096) as usize)
            .max(8)
            .min(8 * (most - out.len()));
        let n = read_into(pid, at, &mut page[..room]);
        if n < 8 {
            return None;
        }
        for chunk in page[..n - n % 8].chunks_exact(8) {
            let ptr = u64::from_ne_bytes(chunk.try_into().ok()?);
            if ptr == 0 {
                return Some(out);
            }
            let s = read_cstring(pid, ptr, MAX_ARGV_BYTES.checked_sub(total)?)?;
            total += s.len() + 1;
            out.push(String::from_utf8_lossy(&s).into_owned());
            if out.len() == most {
                // All that was asked for; MAX_ARGS strings and no end yet
                // is an argv too long to read: refused.
                return (most < MAX_ARGS).then_some(out);
            }
        }
        at += (n - n % 8) as u64;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;

    /// An argv in this process's memory: its strings and the pointer array
    /// (kept alive by the caller), and the array's address.
    fn argv_of(words: &[String]) -> (Vec<CString>, Vec<*const libc::c_char>) {
        let strings: Vec<CString> = words
            .iter()
            .map(|w| CString::new(w.as_str()).unwrap())
            .collect();
        let mut ptrs: Vec<*const libc::c_char> = strings.iter().map(|s| s.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        (strings, ptrs)
    }

    #[test]
    fn an_argv_is_read_whole_or_its_first_words() {
        let me = std::process::id();
        // Long enough that the pointer array spans pages.
        let words: Vec<String> = (0..2000).map(|i| format!("arg-{i}")).collect();
        let (_keep, ptrs) = argv_of(&words);
        let addr = ptrs.as_ptr() as u64;
        assert_eq!(read_argv(me, addr, None).unwrap(), words);
        assert_eq!(read_argv(me, addr, Some(1)).unwrap(), words[..1]);
        assert_eq!(read_argv(me, addr, Some(3)).unwrap(), words[..3]);
        // An empty argv, and none at all.
        let (_keep, empty) = argv_of(&[]);
        assert_eq!(
            read_argv(me, empty.as_ptr() as u64, None).unwrap(),
            Vec::<String>::new()
        );
        assert_eq!(read_argv(me, 0, None).unwrap(), Vec::<String>::new());
        // An address that is not mapped cannot be read: refused.
        assert!(read_argv(me, 8, None).is_none());
        // None asked for, none read.
        assert_eq!(read_argv(me, addr, Some(0)).unwrap(), Vec::<String>::new());
    }

    /// Pages mapped for a test, and the one after them left unmapped.
    struct Pages(*mut u8, usize);

    impl Pages {
        fn new(n: usize) -> Self {
            // SAFETY: a fresh anonymous mapping of n + 1 pages; the last
            // is unmapped again so that nothing lies right after them.
            unsafe {
                let p = libc::mmap(
                    std::ptr::null_mut(),
                    (n + 1) * 4096,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                );
                assert_ne!(p, libc::MAP_FAILED);
                libc::munmap((p as *mut u8).add(n * 4096) as *mut libc::c_void, 4096);
                Pages(p as *mut u8, n)
            }
        }

        fn bytes(&mut self) -> &mut [u8] {
            // SAFETY: the n pages mapped above, alive while self is.
            unsafe { std::slice::from_raw_parts_mut(self.0, self.1 * 4096) }
        }

        fn addr(&self, at: usize) -> u64 {
            self.0 as u64 + at as u64
        }
    }

    impl Drop for Pages {
        fn drop(&mut self) {
            // SAFETY: the pages mapped in new.
            unsafe { libc::munmap(self.0 as *mut libc::c_void, self.1 * 4096) };
        }
    }

    /// A string is read across pages, up to its NUL, and only within its
    /// bound, wherever on its page it starts; one running into a page
    /// that is not mapped is refused.
    #[test]
    fn a_string_is_read_across_pages_within_its_bound() {
        let me = std::process::id();
        let mut pages = Pages::new(3);
        let b = pages.bytes();
        // 6000 bytes starting 100 before the end of the first page.
        let start = 4096 - 100;
        for (i, x) in b[start..start + 6000].iter_mut().enumerate() {
            *x = b'a' + (i % 26) as u8;
        }
        b[start + 6000] = 0;
        let want: Vec<u8> = b[start..start + 6000].to_vec();
        let at = pages.addr(start);
        assert_eq!(read_cstring(me, at, 6000).unwrap(), want);
        assert_eq!(read_cstring(me, at, 10_000).unwrap(), want);
        // One byte more than the bound, on its first page or a later one.
        assert!(read_cstring(me, at, 5999).is_none());
        assert!(read_cstring(me, at, 50).is_none());
        assert!(read_cstring(me, at, 4096).is_none());
        // No NUL before the unmapped page.
        let b = pages.bytes();
        let end = b.len();
        b[end - 10..].fill(b'z');
        assert!(read_cstring(me, pages.addr(end - 10), 100).is_none());
    }

    /// An argv of MAX_ARGS strings or more, read whole, is refused; one
    /// fewer is read.
    #[test]
    fn an_argv_of_too_many_strings_is_refused() {
        let me = std::process::id();
        let one = c"a";
        let mut ptrs = vec![one.as_ptr() as u64; MAX_ARGS];
        ptrs[MAX_ARGS - 1] = 0;
        assert_eq!(
            read_argv(me, ptrs.as_ptr() as u64, None).unwrap().len(),
            MAX_ARGS - 1
        );
        ptrs[MAX_ARGS - 1] = one.as_ptr() as u64;
        ptrs.push(0);
        assert!(read_argv(me, ptrs.as_ptr() as u64, None).is_none());
        // Only the first words asked for: read however long the argv.
        assert_eq!(
            read_argv(me, ptrs.as_ptr() as u64, Some(2)).unwrap(),
            ["a", "a"]
        );
    }

    /// The argv's strings together stay within its bound: past it the
    /// argv is refused, never read on (or the bound wrapped).
    #[test]
    fn an_argv_past_its_bound_is_refused() {
        let me = std::process::id();
        let pages_for = MAX_ARGV_BYTES / 4096 + 2;
        let mut pages = Pages::new(pages_for);
        let b = pages.bytes();
        // A first string a little past the bound, starting off a page's
        // start (so its last page is read whole), then a short one.
        let start = 4000;
        let long = MAX_ARGV_BYTES + 50;
        b[start..start + long].fill(b'x');
        b[start + long] = 0;
        b[start + long + 1] = b'y';
        b[start + long + 2] = 0;
        let ptrs = [pages.addr(start), pages.addr(start + long + 1), 0u64];
        assert!(read_argv(me, ptrs.as_ptr() as u64, None).is_none());
        // Two strings each within the bound, together past it.
        let b = pages.bytes();
        let half = MAX_ARGV_BYTES / 2 + 10;
        b[start + half] = 0;
        let ptrs = [pages.addr(start), pages.addr(start), 0u64];
        assert!(read_argv(me, ptrs.as_ptr() as u64, None).is_none());
        let ptrs = [pages.addr(start), pages.addr(start + half - 20), 0u64];
        assert_eq!(read_argv(me, ptrs.as_ptr() as u64, None).unwrap().len(), 2);
        // The bound counts each string's NUL: a second string that fills
        // the bound but for the first's NUL is past it.
        let b = pages.bytes();
        b.fill(b'x');
        b[start + 100] = 0;
        for (second, whole) in [(MAX_ARGV_BYTES - 101, true), (MAX_ARGV_BYTES - 100, false)] {
            let b = pages.bytes();
            let at = start + 200;
            b[at + second] = 0;
            let ptrs = [pages.addr(start), pages.addr(at), 0u64];
            assert_eq!(
                read_argv(me, ptrs.as_ptr() as u64, None).is_some(),
                whole,
                "{second}"
            );
            pages.bytes()[at + second] = b'x';
        }
        let b = pages.bytes();
        b[start + long] = 0;
        b[start + long + 1] = b'y';
        b[start + long + 2] = 0;
        // Within the bound, the same two strings are read.
        let b = pages.bytes();
        b[start + 100] = 0;
        let ptrs = [pages.addr(start), pages.addr(start + long + 1), 0u64];
        assert_eq!(
            read_argv(me, ptrs.as_ptr() as u64, None).unwrap(),
            ["x".repeat(100), "y".to_string()]
        );
    }

    /// An argv whose pointer array is not 8-aligned, with a pointer
    /// straddling two pages, is read as an aligned one is; one whose next
    /// page is not mapped is refused.
    #[test]
    fn a_misaligned_argv_across_pages_is_read() {
        let me = std::process::id();
        let words: Vec<String> = (0..600).map(|i| format!("w{i}")).collect();
        let (_keep, ptrs) = argv_of(&words);
        let mut pages = Pages::new(3);
        // The array from 4 and 12 bytes before a page's end, and from
        // further back (some pointers read, then one straddling).
        let bytes: Vec<u8> = ptrs
            .iter()
            .flat_map(|p| (*p as u64).to_ne_bytes())
            .collect();
        for start in [4096 - 4, 4096 - 12, 4096 - 4 - 8 * 300] {
            pages.bytes()[start..start + bytes.len()].copy_from_slice(&bytes);
            let at = pages.addr(start);
            assert_eq!(read_argv(me, at, None).unwrap(), words, "{start}");
            assert_eq!(read_argv(me, at, Some(1)).unwrap(), words[..1], "{start}");
        }
        // Straddling into the unmapped page after them: refused.
        let b = pages.bytes();
        let end = b.len();
        b[end - 4..].copy_from_slice(&[1, 2, 3, 4]);
        assert!(read_argv(me, pages.addr(end - 4), None).is_none());
    }
}
