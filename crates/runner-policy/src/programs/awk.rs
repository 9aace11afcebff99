//! awk programs: a language that can run commands and write files.
//! `system()`, pipes (`print | CMD`, `CMD | getline`) and coprocesses run
//! commands, so the call is opaque; `print > "FILE"` writes FILE and
//! `getline < "FILE"` reads it, while a file named by any other expression
//! is only known at run time and fails closed, as does a program from a
//! file (`awk -f`).

use super::spec::{FileOperands, Spec};
use super::text::SPECS;

/// `awk`: its program language; a program from a file cannot be seen.
pub(super) fn awk(args: &[String]) -> FileOperands {
    let spec = Spec {
        language: Some(awk_program),
        opaque_text_file: true,
        ..SPECS[2]
    };
    spec.operands(args)
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
                out.starts("its awk program runs a command (`system`)");
                return;
            }
            "|" | "|&" => {
                out.starts("its awk program runs a command through a pipe");
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
    use super::super::tests::{ops, ops_of};

    /// Comments and strings as awk reads them: what a comment says does
    /// nothing, the next line does; an escaped quote stays in its string.
    #[test]
    fn awk_comments_and_strings() {
        let awk = |program: &str| ops_of(&["awk", program, "f"]);
        for (program, want) in [
            ("# print > \"x\"\n{ print }", "read f"),
            ("# c\n{ print > \"out\" }", "read f; write out"),
            ("{ print \"a\\\"b\" > \"out\" }", "read f; write out"),
            ("{ print \"abc", "read f"),
            ("{ print } # end", "read f"),
            ("{ getline line < \"s\" }", "read s f"),
            ("{ if (x < 5) print }", "read f"),
            ("NR > 1 { print }", "read f"),
            ("/a\\/b|c/ { print }", "read f"),
            ("/abc", "read f"),
            ("{ print (1 > 2) }", "read f"),
            ("{ print; y = x > \"b\" }", "read f"),
            ("{ print $system }", "read f"),
            ("{ print _x > \"o\" }", "read f; write o"),
            ("{ print $1 > \"o\" }", "read f; write o"),
            ("{ print >> \"o\" }", "read f; write o"),
            // `getline < FILE` and `getline VAR < FILE`, first in the
            // program or after other statements; a `<` near the start
            // that is not getline's.
            ("getline < \"s\"", "read s f"),
            ("getline l < \"s\"", "read s f"),
            ("{ getline < \"s\" }", "read s f"),
            ("{ x = 1; getline l < \"s\" }", "read s f"),
            ("< \"s\"", "read f"),
            ("x < 1 { print }", "read f"),
            // Words start with `_` and `$` too: `_system` is a function
            // of the program's, not awk's `system`.
            (
                "function _system(a) { return a } { print _system(1) }",
                "read f",
            ),
            // A regex literal ends at its `/`: its last character is not
            // read again (`|` inside is alternation).
            ("/a|/ { print }", "read f"),
        ] {
            assert_eq!(awk(program), want, "{program:?}");
        }
        for program in [
            "{ getline < $2 }",
            "{ getline line < $2 }",
            "{ print > $2 }",
            // After a regex, `/` divides (as awk's lexer reads it): the
            // `|` is a pipe.
            "/a/ /b|c/ { print }",
        ] {
            assert!(awk(program).starts_with("opaque"), "{program:?}");
        }
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
}
