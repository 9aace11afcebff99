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
            short_values: "elf",
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
                out.starts("its sed script runs a command (`e`)");
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
                            out.starts("its sed script runs a command (`s///e`)");
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
        // getopt takes any unambiguous prefix, one letter too.
        assert_eq!(ops("sed --i s/a/b/ f"), "write f");
        assert_eq!(ops("sed --in s/a/b/ f"), "write f");
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

    /// `-s` (`--separate`) takes no value: the word after it is the
    /// script, which here reads `secret`.
    #[test]
    fn separate_takes_no_value() {
        assert_eq!(ops("sed -s 1rsecret s/x/y/ f"), "read secret s/x/y/ f");
        assert_eq!(ops("sed -l 80 p f"), "read f");
        assert_eq!(ops("sed -sn -l 80 wout f"), "read f; write out");
        // `-i`'s suffix is attached and may be any letters, `l` too (a
        // backup suffix, not `-l`'s value).
        assert_eq!(ops("sed -il p f"), "write f");
    }

    /// What a plain script's commands say, each written so that misreading
    /// its arguments (a label, a text, a flag, an address) would read an
    /// `e`, an `r`, a `w` or an unknown command out of them: the exact
    /// reads and writes, or the exact reason it is opaque.
    #[test]
    fn every_command_and_its_arguments_are_read() {
        let sed = |script: &str| super::super::tests::ops_of(&["sed", script, "f"]);
        let rows: &[(&str, &str)] = &[
            // Commands without arguments, one by one and together.
            ("=;d;D;g;G;h;H;l;n;N;p;P;x;z;F", "read f"),
            // A comment runs to the end of the line.
            ("# e rsecret\nwout", "read f; write out"),
            // Addresses: line numbers, steps, the last line, regexes with
            // their flags, a custom delimiter with an escaped one inside.
            ("0~3p;$p;1,+2p", "read f"),
            ("/e/Ip;/rx/M,/we/Id", "read f"),
            ("/e/I", "read f"),
            ("\\,e\\,w,d", "read f"),
            ("\\|e|p", "read f"),
            ("/a\\/e/d", "read f"),
            // What follows an address is read: its delimiter is `/`, or
            // the character after `\`.
            ("/a/wout", "read f; write out"),
            ("\\,a,wout", "read f; write out"),
            // An address or s left open at the end reads no further.
            ("/a", "read f"),
            ("s/a", "read f"),
            // Labels: `:` to the end of the line, `b`/`t`/`T` to a `;`.
            (":a;wout", "read f"),
            (":e\nwout", "read f; write out"),
            ("tlabel;wout", "read f; write out"),
            ("blabel;wout", "read f; write out"),
            ("Tlabel;wout", "read f; write out"),
            ("be;wout", "read f; write out"),
            // Text of a, i, c: to the end of the line, `\` continuing it.
            ("ahello e;wout", "read f"),
            ("ihello e;wout", "read f"),
            ("chello e;wout", "read f"),
            ("a\\\nrun e\nwout", "read f; write out"),
            ("a x\\\\\nwout", "read f; write out"),
            // Files.
            ("Rsecret", "read secret f"),
            ("Wout", "read f; write out"),
            // q, Q, L with an exit code, v with a version.
            ("q5;wout", "read f; write out"),
            ("Q5;wout", "read f; write out"),
            ("L5;wout", "read f; write out"),
            ("q5", "read f"),
            ("Q12", "read f"),
            ("v 4.2;wout", "read f; write out"),
            ("v", "read f"),
            // y: two parts, no flags.
            ("y/ae/ea/;wout", "read f; write out"),
            // s: its flags, an escaped delimiter, and `w` to the line's end.
            ("s/a/b/gpiImM3;wout", "read f; write out"),
            ("s/a/b/gi;wout", "read f; write out"),
            ("s/a/b/I", "read f"),
            ("s/a\\/e/x/", "read f"),
            ("s/a/b/w out;e", "read f; write out;e"),
        ];
        for (script, want) in rows {
            assert_eq!(sed(script), *want, "sed {script:?}");
        }
        // The exact reasons: each names the command that makes it opaque.
        let opaque = [
            ("e", "its sed script runs a command (`e`)"),
            ("1e", "its sed script runs a command (`e`)"),
            ("s/a/id/e", "its sed script runs a command (`s///e`)"),
            ("s/a/id/ge", "its sed script runs a command (`s///e`)"),
            ("s\\a\\b\\", "its sed script could not be read"),
            ("s\na\nb\n", "its sed script could not be read"),
            (
                "k",
                "its sed script has `k`, a command the policy does not know",
            ),
            (
                "p;K",
                "its sed script has `K`, a command the policy does not know",
            ),
        ];
        for (script, why) in opaque {
            assert_eq!(sed(script), format!("opaque: {why}"), "sed {script:?}");
        }
    }
}
