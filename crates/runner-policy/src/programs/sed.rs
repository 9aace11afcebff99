//! sed scripts: a language that can run commands and write files, small
//! enough to read. `w FILE`, `W FILE` and the `w FILE` flag of `s` write
//! FILE; `r FILE` and `R FILE` read it; the `e` command and the `e` flag of
//! `s` run commands, so the call is opaque (only a rule naming the exact
//! text allows it), as is a script from a file the policy cannot see into
//! (`sed -f`) and a command the reader does not know.

use super::spec::{FileOperands, Options, Spec};
use super::text::SPECS;

/// `sed`: its script language and its in-place flag, whose suffix is
/// optional and only ever attached (`-i`, `-i.bak`, `--in-place=.bak`).
pub(super) fn sed(args: &[String]) -> FileOperands {
    let spec = Spec {
        options: Options {
            short_values: "elfs",
            long_values: &["--expression", "--file", "--line-length"],
            optional: &["-i", "--in-place"],
        },
        in_place: &["-i", "--in-place"],
        language: Some(sed_script),
        opaque_text_file: true,
        ..SPECS[1]
    };
    spec.operands(args)
}

/// Reads a sed script: `w FILE` and `s///w FILE` write FILE, `r FILE` and
/// `R FILE` read it, `e` and `s///e` run commands.
fn sed_script(script: &str, out: &mut FileOperands) {
    let b = script.as_bytes();
    let mut i = 0;
    // The file name that ends a command: to the end of the line.
    let to_eol = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i] != b'\n' {
            *i += 1;
        }
        script[start..*i].trim().to_string()
    };
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' | b'\t' | b'\n' | b';' | b'}' | b'!' | b'{' | b',' => i += 1,
            b'#' => {
                to_eol(&mut i);
            }
            b'0'..=b'9' | b'$' | b'~' | b'+' => i += 1,
            // An address: /re/ or \cREc.
            b'/' | b'\\' => {
                let delim = if c == b'\\' {
                    i += 1;
                    b.get(i).copied().unwrap_or(b'/')
                } else {
                    b'/'
                };
                i = skip_delimited(b, i + 1, delim);
                // Flags of an address: I, M.
                while i < b.len() && matches!(b[i], b'I' | b'M') {
                    i += 1;
                }
            }
            b':' | b'b' | b't' | b'T' => {
                // A label: to the end of the line (or `;` for b/t/T).
                i += 1;
                while i < b.len() && b[i] != b'\n' && !(c != b':' && b[i] == b';') {
                    i += 1;
                }
            }
            b'a' | b'i' | b'c' => {
                i += 1;
                // Text to the end of the line, with `\` continuing it.
                while i < b.len() && b[i] != b'\n' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'r' | b'R' => {
                i += 1;
                let f = to_eol(&mut i);
                out.reads.push(f);
            }
            b'w' | b'W' => {
                i += 1;
                let f = to_eol(&mut i);
                out.writes.push(f);
            }
            b'e' => {
                out.opaque("its sed script runs a command (`e`)");
                return;
            }
            b's' | b'y' => {
                let Some(&delim) = b.get(i + 1) else {
                    return;
                };
                if delim == b'\n' || delim == b'\\' {
                    out.opaque("its sed script could not be read");
                    return;
                }
                i = skip_delimited(b, i + 2, delim);
                i = skip_delimited(b, i, delim);
                if c == b'y' {
                    continue;
                }
                // Flags: g, p, i, I, m, M, e, digits, w FILE (to the end).
                while i < b.len() {
                    match b[i] {
                        b'e' => {
                            out.opaque("its sed script runs a command (`s///e`)");
                            return;
                        }
                        b'w' => {
                            i += 1;
                            let f = to_eol(&mut i);
                            out.writes.push(f);
                            break;
                        }
                        b'g' | b'p' | b'i' | b'I' | b'm' | b'M' | b'0'..=b'9' => i += 1,
                        _ => break,
                    }
                }
            }
            b'=' | b'd' | b'D' | b'g' | b'G' | b'h' | b'H' | b'l' | b'n' | b'N' | b'p' | b'P'
            | b'x' | b'z' | b'F' => i += 1,
            b'q' | b'Q' | b'L' => {
                i += 1;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            b'v' => {
                i += 1;
                while i < b.len() && !matches!(b[i], b'\n' | b';') {
                    i += 1;
                }
            }
            _ => {
                out.opaque(format!(
                    "its sed script has `{}`, a command the policy does not know",
                    c as char
                ));
                return;
            }
        }
    }
}

/// The index after the closing `delim`, honouring `\` escapes.
fn skip_delimited(b: &[u8], mut i: usize, delim: u8) -> usize {
    while i < b.len() && b[i] != delim {
        if b[i] == b'\\' {
            i += 1;
        }
        i += 1;
    }
    i + 1
}

#[cfg(test)]
mod tests {
    use super::super::tests::ops;

    #[test]
    fn sed_scripts() {
        assert_eq!(ops("sed -n p src/a"), "read src/a");
        assert_eq!(ops("sed -i s/a/b/ f"), "write f");
        assert_eq!(ops("sed -i.bak s/a/b/ f"), "write f");
        assert_eq!(ops("sed --in-place=.bak s/a/b/ f"), "write f");
        assert_eq!(ops("sed -ni p f"), "write f");
        assert_eq!(ops("sed -e s/a/b/ f"), "read f");
        assert_eq!(ops("sed wout f"), "read f; write out");
        assert_eq!(ops("sed s/a/b/w.github/x f"), "read f; write .github/x");
        assert_eq!(ops("sed 1rsecret f"), "read secret f");
        assert_eq!(ops("sed s|a|b|g;/x/d f"), "read f");
        assert!(ops("sed e f").starts_with("opaque"));
        assert!(ops("sed s/a/id/e f").starts_with("opaque"));
        assert!(ops("sed 1e f").starts_with("opaque"));
        assert!(ops("sed -f script.sed f").starts_with("opaque"));
        assert!(ops("sed -e p -e 2e f").starts_with("opaque"));
    }
}
