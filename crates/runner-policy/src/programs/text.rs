//! Text tools whose first operand is program text, not a file: `grep` and
//! `rg` (a pattern; `-r` and `rg` itself search whole folders), `sed` (a
//! script; `-i` writes every file operand), `awk` (a program), `jq` (a
//! filter). The text can also come from an option (`-e`) or a file (`-f
//! FILE`, itself read).
//!
//! sed and awk are languages that can run commands and write files. Their
//! programs are small enough to read: a sed script's `w FILE`/`r FILE` and
//! `s///w FILE` name files (written or read), its `e` command and `s///e`
//! flag run commands; an awk program's `system()`, pipes (`print | CMD`,
//! `CMD | getline`) run commands and `print > FILE` writes one. A command
//! that runs is opaque (only a rule naming the exact text allows it), as is
//! a program read from a file the policy cannot see into (`sed -f`, `awk
//! -f`), and a written file only known at run time (`print > $2`).

use super::spec::{FileOperands, Options, Spec, reader};

/// The shapes of the text tools.
pub(super) const SPECS: &[Spec] = &[
    Spec {
        leading: 1,
        text_opts: &["-e", "--regexp"],
        text_file_opts: &["-f", "--file"],
        recursive: &["-r", "-R", "--recursive", "--dereference-recursive"],
        ..reader(
            &["grep", "egrep", "fgrep"],
            "ABCmefdD",
            &[
                "--after-context",
                "--before-context",
                "--context",
                "--max-count",
                "--include",
                "--exclude",
                "--exclude-from",
                "--exclude-dir",
                "--label",
                "--regexp",
                "--file",
                "--devices",
                "--directories",
                "--binary-files",
                "--color",
                "--colour",
            ],
        )
    },
    Spec {
        leading: 1,
        text_opts: &["-e", "--expression"],
        text_file_opts: &["-f", "--file"],
        ..reader(
            &["sed"],
            "elf",
            &["--expression", "--file", "--line-length"],
        )
    },
    Spec {
        leading: 1,
        text_opts: &["-e", "--source"],
        text_file_opts: &["-f", "--file", "-i", "--include", "-E", "--exec"],
        ..reader(
            &["awk", "gawk", "mawk", "nawk"],
            "Ffveil",
            &[
                "--field-separator",
                "--assign",
                "--file",
                "--source",
                "--include",
                "--exec",
                "--load",
            ],
        )
    },
    Spec {
        leading: 1,
        text_file_opts: &["-f", "--from-file"],
        ..reader(&["jq"], "fL", &["--indent", "--from-file"])
    },
];

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

/// `awk`: its program language; a program from a file cannot be seen.
pub(super) fn awk(args: &[String]) -> FileOperands {
    let spec = Spec {
        language: Some(awk_program),
        opaque_text_file: true,
        ..SPECS[2]
    };
    spec.operands(args)
}

/// `rg PATTERN [PATH...]`: searches whole folders (the current one when no
/// path is given); `--pre CMD` runs a command on every file.
pub(super) fn rg(args: &[String]) -> FileOperands {
    let spec = Spec {
        leading: 1,
        text_opts: &["-e", "--regexp"],
        text_file_opts: &["-f", "--file"],
        ..reader(
            &["rg"],
            "ABCmegtTMjEfr",
            &[
                "--after-context",
                "--before-context",
                "--context",
                "--max-count",
                "--regexp",
                "--glob",
                "--iglob",
                "--type",
                "--type-not",
                "--max-columns",
                "--threads",
                "--encoding",
                "--file",
                "--replace",
                "--pre",
                "--pre-glob",
                "--ignore-file",
                "--type-add",
                "--sort",
                "--sortr",
                "--max-depth",
                "--color",
                "--colors",
            ],
        )
    };
    let mut out = spec.operands(args);
    if args.iter().any(|a| a == "--pre" || a.starts_with("--pre=")) {
        out.opaque("`rg --pre` runs a command on every file it searches");
    }
    let paths = std::mem::take(&mut out.reads);
    if paths.is_empty() && !args.iter().any(|a| a == "--files" || a == "--type-list") {
        out.tree_reads.push(".".into());
    } else {
        out.tree_reads.extend(paths);
    }
    out
}

/// `jq`: `--rawfile NAME FILE` and `--slurpfile NAME FILE` read FILE.
pub(super) fn jq(args: &[String]) -> FileOperands {
    let mut rest = Vec::new();
    let mut extra = Vec::new();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--rawfile" | "--slurpfile" => {
                extra.extend(args.get(i + 2).cloned());
                i += 3;
            }
            "--arg" | "--argjson" => i += 3,
            _ => {
                rest.push(args[i].clone());
                i += 1;
            }
        }
    }
    let mut out = SPECS[3].operands(&rest);
    out.reads.extend(extra);
    out
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

/// Reads an awk program: `system(...)`, `|` pipes and `|&` coprocesses run
/// commands; `print > FILE`/`>> FILE` writes FILE (a string literal; any
/// other expression is only known at run time); `getline < FILE` reads it.
fn awk_program(program: &str, out: &mut FileOperands) {
    let tokens = awk_tokens(program);
    let mut in_print = false;
    let mut depth = 0i32;
    for (k, t) in tokens.iter().enumerate() {
        let next = tokens.get(k + 1);
        match t.as_str() {
            "system" if next.is_some_and(|n| n == "(") => {
                out.opaque("its awk program runs a command (`system`)");
                return;
            }
            "|" | "|&" => {
                out.opaque("its awk program runs a command through a pipe");
                return;
            }
            "print" | "printf" => {
                in_print = true;
                depth = 0;
            }
            "(" => depth += 1,
            ")" => depth -= 1,
            ";" | "{" | "}" | "\n" => in_print = false,
            ">" | ">>" if in_print && depth <= 0 => match next {
                Some(n) if n.starts_with('"') => out.writes.push(unquote(n)),
                _ => {
                    out.opaque("its awk program writes to a file only known when it runs");
                    return;
                }
            },
            // `getline < FILE`, `getline VAR < FILE`.
            "<" if (k > 0 && tokens[k - 1] == "getline")
                || (k > 1 && tokens[k - 2] == "getline") =>
            {
                match next {
                    Some(n) if n.starts_with('"') => out.reads.push(unquote(n)),
                    _ => {
                        out.opaque("its awk program reads a file only known when it runs");
                        return;
                    }
                }
            }
            _ => {}
        }
    }
}

fn unquote(s: &str) -> String {
    s.trim_matches('"').replace("\\\"", "\"")
}

/// awk tokens: strings and regex literals whole, words, and operators.
fn awk_tokens(p: &str) -> Vec<String> {
    let chars: Vec<char> = p.chars().collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            out.push("\n".into());
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '"' {
            let start = i;
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push(chars[start..i.min(chars.len())].iter().collect());
        } else if c == '/' && regex_may_start(out.last().map(String::as_str)) {
            // A regex literal: skipped whole (its `|` is alternation).
            i += 1;
            while i < chars.len() && chars[i] != '/' && chars[i] != '\n' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push("/re/".into());
        } else if c.is_alphanumeric() || c == '_' || c == '$' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            if i == start {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        } else {
            let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
            if matches!(
                two.as_str(),
                "||" | "|&" | ">>" | "&&" | ">=" | "<=" | "==" | "!="
            ) {
                out.push(two);
                i += 2;
            } else {
                out.push(c.to_string());
                i += 1;
            }
        }
    }
    out
}

/// True when a `/` after `prev` starts a regex rather than dividing.
fn regex_may_start(prev: Option<&str>) -> bool {
    match prev {
        None => true,
        Some(p) => {
            !(p.ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ')' || c == ']')
                || p.starts_with('"')
                || p == "/re/")
        }
    }
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

    #[test]
    fn awk_programs() {
        assert_eq!(ops("awk {print} src/a"), "read src/a");
        assert_eq!(ops("awk $1>5 src/a"), "read src/a");
        assert_eq!(ops("awk /a|b/ src/a"), "read src/a");
        assert_eq!(ops("awk {print>\"out\"} f"), "read f; write out");
        assert_eq!(ops("awk {print(1)>\"out\"} f"), "read f; write out");
        assert_eq!(ops("awk {getline<\"s\"} f"), "read s f");
        assert_eq!(ops("sed --expression=p f"), "read f");
        assert!(ops("sed --expression=1e f").starts_with("opaque"));
        assert!(ops("awk {system(\"id\")} f").starts_with("opaque"));
        assert!(ops("awk {print|\"sh\"} f").starts_with("opaque"));
        assert!(ops("awk {\"id\"|getline} f").starts_with("opaque"));
        assert!(ops("awk {print>$2} f").starts_with("opaque"));
        assert!(ops("awk -f prog.awk f").starts_with("opaque"));
    }

    #[test]
    fn searchers() {
        assert_eq!(ops("grep -n foo a b"), "read a b");
        assert_eq!(ops("grep -e foo a"), "read a");
        assert_eq!(ops("grep -r x ."), "tree-read .");
        assert_eq!(ops("grep -rn x src"), "tree-read src");
        assert_eq!(ops("rg TODO"), "tree-read .");
        assert_eq!(ops("rg -n TODO src"), "tree-read src");
        assert!(ops("rg --pre cat x").starts_with("opaque"));
        assert_eq!(ops("jq . a.json"), "read a.json");
        assert_eq!(ops("jq --rawfile k .env . a.json"), "read a.json .env");
    }
}
