//! What `git apply` needs beyond a unified diff: blob ids for `index`
//! lines (SHA-1 of `blob LEN\0CONTENT`) and binary contents as `GIT binary
//! patch` literals (zlib data in git's base85). The zlib stream uses stored
//! (uncompressed) blocks: valid for every inflater, and no compression
//! library is needed for the few binary files a task changes.

/// The git blob id (40 hex digits) of `content`.
pub fn blob_id(content: &[u8]) -> String {
    let mut h = Sha1::new();
    h.update(format!("blob {}\0", content.len()).as_bytes());
    h.update(content);
    h.hex()
}

/// The id git writes for a missing side.
pub const NULL_ID: &str = "0000000000000000000000000000000000000000";

/// A `literal` hunk of a git binary patch: `literal LEN` then base85 lines.
pub fn binary_literal(content: &[u8]) -> String {
    let z = zlib_stored(content);
    let mut out = format!("literal {}\n", content.len());
    for chunk in z.chunks(52) {
        let len = chunk.len();
        out.push(if len <= 26 {
            (b'A' + len as u8 - 1) as char
        } else {
            (b'a' + len as u8 - 27) as char
        });
        out.push_str(&base85(chunk));
        out.push('\n');
    }
    out.push('\n');
    out
}

const B85: &[u8; 85] =
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

/// git's base85: each 4 bytes (zero-padded) become 5 characters.
fn base85(data: &[u8]) -> String {
    let mut out = String::new();
    for chunk in data.chunks(4) {
        let mut word = [0u8; 4];
        word[..chunk.len()].copy_from_slice(chunk);
        let mut acc = u32::from_be_bytes(word);
        let mut five = [0u8; 5];
        for c in five.iter_mut().rev() {
            *c = B85[(acc % 85) as usize];
            acc /= 85;
        }
        out.push_str(std::str::from_utf8(&five).expect("ascii"));
    }
    out
}

/// A zlib stream of stored deflate blocks.
fn zlib_stored(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x78, 0x01];
    let mut blocks = data.chunks(65_535).peekable();
    if blocks.peek().is_none() {
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    while let Some(block) = blocks.next() {
        let last = blocks.peek().is_none();
        out.push(u8::from(last));
        let len = block.len() as u16;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in data {
        a = (a + u32::from(byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    out.extend_from_slice(&((b << 16) | a).to_be_bytes());
    out
}

/// SHA-1, for blob ids only (git's object names, not a security measure).
struct Sha1 {
    state: [u32; 5],
    buffer: Vec<u8>,
    length: u64,
}

impl Sha1 {
    fn new() -> Self {
        Self {
            state: [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0],
            buffer: Vec::with_capacity(64),
            length: 0,
        }
    }

    fn update(&mut self, mut data: &[u8]) {
        self.length += data.len() as u64;
        if !self.buffer.is_empty() {
            let take = (64 - self.buffer.len()).min(data.len());
            self.buffer.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.buffer.len() == 64 {
                let block: [u8; 64] = self.buffer[..].try_into().expect("64 bytes");
                self.block(&block);
                self.buffer.clear();
            }
        }
        let mut chunks = data.chunks_exact(64);
        for block in &mut chunks {
            self.block(block.try_into().expect("64 bytes"));
        }
        self.buffer.extend_from_slice(chunks.remainder());
    }

    fn block(&mut self, block: &[u8; 64]) {
        let mut w = [0u32; 80];
        for (i, word) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes(word.try_into().expect("4 bytes"));
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = self.state;
        for (i, wi) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5A827999),
                20..=39 => (b ^ c ^ d, 0x6ED9EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1BBCDC),
                _ => (b ^ c ^ d, 0xCA62C1D6),
            };
            let t = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(*wi);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = t;
        }
        for (s, v) in self.state.iter_mut().zip([a, b, c, d, e]) {
            *s = s.wrapping_add(v);
        }
    }

    fn hex(mut self) -> String {
        let bits = self.length * 8;
        let mut pad = vec![0x80u8];
        while (self.buffer.len() + pad.len()) % 64 != 56 {
            pad.push(0);
        }
        pad.extend_from_slice(&bits.to_be_bytes());
        let length = self.length;
        self.update(&pad);
        self.length = length;
        self.state.iter().map(|s| format!("{s:08x}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_ids_are_gits() {
        // `git hash-object` of an empty file and of "hello\n".
        assert_eq!(blob_id(b""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
        assert_eq!(
            blob_id(b"hello\n"),
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
        // Over one block, and across the 56-byte padding edge.
        let long = vec![b'x'; 1000];
        assert_eq!(blob_id(&long).len(), 40);
        assert_ne!(blob_id(&long), blob_id(&long[..999]));
    }

    #[test]
    fn zlib_checksum_and_base85() {
        assert_eq!(base85(&[0, 0, 0, 0]), "00000");
        let z = zlib_stored(b"abc");
        assert_eq!(&z[..2], &[0x78, 0x01]);
        // Adler-32 of "abc" is 0x024d0127.
        assert_eq!(&z[z.len() - 4..], &[0x02, 0x4d, 0x01, 0x27]);
    }
}
