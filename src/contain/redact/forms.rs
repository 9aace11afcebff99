//! The forms a secret value travels in: itself; the part of its base64
//! that does not depend on its neighbours, at each of the three alignments
//! it can have inside a longer encoded text (so the base64 of
//! `x-access-token:VALUE` is caught too); URL-encoded; hex in both cases;
//! reversed; and each of those as a JSON string holds it (`"` and `\`
//! escaped, `/` as `\/` where an encoder escapes it).

/// Secret values shorter than this are not replaced as substrings.
pub const MIN_VALUE_LEN: usize = 8;

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64, without padding.
pub(super) fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(BASE64[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// `value` percent-encoded but for the unreserved characters.
fn url_encoded(value: &str) -> String {
    let mut url = String::new();
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                url.push(b as char)
            }
            _ => url.push_str(&format!("%{b:02X}")),
        }
    }
    url
}

/// `text` as it stands between a JSON string's quotes.
fn json_escaped(text: &str) -> String {
    let quoted = serde_json::to_string(text).expect("a string serialises");
    quoted[1..quoted.len() - 1].to_string()
}

/// Every form of `value` (see the module's doc), each once.
pub(crate) fn forms(value: &str) -> Vec<String> {
    let mut out = vec![value.to_string()];
    for align in 0..3usize {
        let mut bytes = vec![0u8; align];
        bytes.extend_from_slice(value.as_bytes());
        let encoded = base64(&bytes);
        let from = (align * 8).div_ceil(6);
        let to = (bytes.len() * 8) / 6;
        if to > from && to - from >= MIN_VALUE_LEN {
            out.push(encoded[from..to].to_string());
        }
    }
    out.push(url_encoded(value));
    let hex: String = value.bytes().map(|b| format!("{b:02x}")).collect();
    out.push(hex.to_ascii_uppercase());
    out.push(hex);
    out.push(value.chars().rev().collect());
    for i in 0..out.len() {
        let json = json_escaped(&out[i]);
        if json.contains('/') {
            out.push(json.replace('/', "\\/"));
        }
        out.push(json);
    }
    out.sort();
    out.dedup();
    out
}
