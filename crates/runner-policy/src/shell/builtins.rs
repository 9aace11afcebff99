//! Builtins that assign or test variables by name (`read`, `mapfile`,
//! `printf -v`, `getopts`, `wait -p`, `unset`, `test -v`, `let`,
//! `declare` and its kin) and `shopt`'s glob options: what they tell the
//! checks of [`super::arith`] and the glob expansion of operands.

use super::arith::origin_of_text;
use super::state::{Origin, Walker};

/// Glob options that make a glob operand match what [`super::expand`]
/// would not (dot files, `**` across folders, other cases, extended globs).
const GLOB_OPTIONS: &[&str] = &[
    "dotglob",
    "globstar",
    "nocaseglob",
    "extglob",
    "globskipdots",
];

/// Builtins that may read any of their words as a variable name.
const NAME_TAKERS: &[&str] = &[
    "read",
    "mapfile",
    "readarray",
    "printf",
    "getopts",
    "wait",
    "unset",
    "test",
    "[",
    "let",
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
];

/// A word holding a subscript with a command substitution: `a[$(cmd)]`.
fn holds_subscript_code(w: &str) -> bool {
    w.find('[')
        .is_some_and(|i| w[i..].contains("$(") || w[i..].contains('`'))
}

impl Walker {
    /// Looks at a builtin's arguments (nothing for other programs).
    pub(super) fn variable_builtin(&mut self, prog: &str, args: &[String]) {
        if NAME_TAKERS.contains(&prog)
            && let Some(a) = args.iter().find(|a| holds_subscript_code(a))
        {
            // Whichever word ends up a name (`test $x-v 'a[$(...)]'`, where
            // `$x` is empty, makes the option), bash runs the substitution
            // in its subscript.
            self.opaque(format!(
                "`{prog}` may read `{a}` as a variable name, whose subscript bash would run"
            ));
            return;
        }
        match prog {
            "read" => {
                let names = operands(args, "adinNptu");
                if let Some(i) = args.iter().position(|a| a == "-a")
                    && let Some(n) = args.get(i + 1)
                {
                    self.variable_operand(n, true);
                }
                if names.is_empty() {
                    self.assign("REPLY", Origin::runtime());
                }
                for n in names {
                    self.variable_operand(n, true);
                }
            }
            "mapfile" | "readarray" => {
                let names = operands(args, "dnOsuCc");
                match names.first() {
                    Some(n) => self.variable_operand(n, true),
                    None => self.assign("MAPFILE", Origin::runtime()),
                }
            }
            "printf" => {
                // Options come before the format; the last `-v` wins, so
                // every one is checked.
                let mut i = 0;
                while i < args.len() && args[i].starts_with('-') && args[i] != "--" {
                    if args[i] == "-v"
                        && let Some(n) = args.get(i + 1)
                    {
                        self.variable_operand(n, true);
                        i += 1;
                    } else if let Some(n) = args[i].strip_prefix("-v") {
                        self.variable_operand(n, true);
                    }
                    i += 1;
                }
            }
            "getopts" => {
                if let Some(n) = args.get(1) {
                    self.variable_operand(n, true);
                }
            }
            "wait" => {
                if let Some(i) = args.iter().position(|a| a == "-p")
                    && let Some(n) = args.get(i + 1)
                {
                    self.variable_operand(n, true);
                }
            }
            "unset" if !args.iter().any(|a| a == "-f") => {
                for n in args.iter().filter(|a| !a.starts_with('-')) {
                    self.variable_operand(n, false);
                }
            }
            "test" | "[" => {
                for w in args.windows(2) {
                    if matches!(w[0].as_str(), "-v" | "-R") {
                        self.variable_operand(&w[1], false);
                    }
                }
            }
            "let" => {
                for a in args {
                    self.arithmetic(a);
                }
            }
            "declare" | "typeset" | "local" | "export" | "readonly" => self.declare(args),
            "set" => self.set_options(args),
            "shopt" => {
                let on = args.iter().any(|a| a == "-s");
                if on && args.iter().any(|a| GLOB_OPTIONS.contains(&a.as_str())) {
                    self.glob_options = true;
                }
            }
            _ => {}
        }
    }

    /// `declare [-aAfFgiIlnrtux] [NAME[=VALUE]...]`: each assignment is
    /// recorded; `-i` makes the value arithmetic, `-n` makes it a name
    /// bash resolves on every use.
    fn declare(&mut self, args: &[String]) {
        let mut integer = false;
        let mut nameref = false;
        for a in args {
            if let Some(flags) = a.strip_prefix('-') {
                integer |= flags.contains('i');
                nameref |= flags.contains('n');
                continue;
            }
            if a.starts_with('+') {
                continue;
            }
            let (name, value) = match a.split_once('=') {
                Some((n, v)) => (n.trim_end_matches('+'), Some(v)),
                None => (a.as_str(), None),
            };
            if nameref {
                // A name reference makes every later assignment to it an
                // assignment to the variable it names (`PATH`, ...).
                self.opaque(format!(
                    "`{name}` is made a reference to another variable, which hides what assignments change"
                ));
                return;
            }
            self.variable_operand(name, false);
            if integer {
                self.integers.push(base(name).to_string());
            }
            match value {
                Some(v) if integer => self.arithmetic(v),
                Some(v) => self.assign(name, origin_of_text(v)),
                None => {}
            }
        }
    }

    /// The values of a word made of literal text and loop variables bound
    /// to literal lists (`src/$f.rs` in `for f in a b`); `None` when it
    /// holds anything else only known at run time.
    pub(super) fn bound_values(&self, word: &str) -> Option<Vec<String>> {
        if self.bindings.is_empty() || word.contains('`') || word.contains("$(") {
            return None;
        }
        let mut out = vec![String::new()];
        let mut rest = word;
        while let Some(i) = rest.find('$') {
            let prefix = &rest[..i];
            let after = &rest[i + 1..];
            let (name, len) = match after.strip_prefix('{') {
                Some(b) => {
                    let end = b.find('}')?;
                    (&b[..end], end + 2)
                }
                None => {
                    let end = after
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .unwrap_or(after.len());
                    (&after[..end], end)
                }
            };
            let (_, values) = self.bindings.iter().rev().find(|(n, _)| n == name)?;
            let mut next = Vec::new();
            for o in &out {
                for v in values {
                    next.push(format!("{o}{prefix}{v}"));
                }
            }
            if next.len() > 64 {
                return None;
            }
            out = next;
            rest = &after[len..];
        }
        Some(out.into_iter().map(|o| format!("{o}{rest}")).collect())
    }
}

/// A variable's name without its subscript.
fn base(name: &str) -> &str {
    name.split('[').next().unwrap_or(name)
}

/// The operands of a builtin whose short options in `with_value` take one.
fn operands<'a>(args: &'a [String], with_value: &str) -> Vec<&'a String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            out.extend(&args[i..]);
            break;
        }
        if let Some(flags) = a.strip_prefix('-')
            && !flags.is_empty()
        {
            // `-a NAME` is handled by the caller; `-n5` carries its value.
            if let Some(last) = flags.chars().last()
                && with_value.contains(last)
                && flags.len() == 1
            {
                i += 1;
            }
            continue;
        }
        out.push(a);
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::shell::analyze;

    fn opaque(s: &str) -> bool {
        analyze(s).opaque.is_some()
    }

    /// A name with a substitution in its subscript, wherever a builtin
    /// may take it for a name.
    #[test]
    fn subscripts_with_code_in_name_operands() {
        assert_eq!(
            analyze("read 'a[$(id)]'").opaque.as_deref(),
            Some("`read` may read `a[$(id)]` as a variable name, whose subscript bash would run")
        );
        assert_eq!(
            analyze("unset 'a[`id`]'").opaque.as_deref(),
            Some("`unset` may read `a[`id`]` as a variable name, whose subscript bash would run")
        );
        assert!(!opaque("printf '%s' 'a[1]' '$(id)'"));
    }

    /// Each builtin's name operands, found where the builtin takes them.
    #[test]
    fn each_builtins_name_operands() {
        // read: `-a NAME` and the operands.
        assert!(!opaque("read -a arr"));
        assert!(opaque("read -a arr; (( arr ))"));
        assert!(opaque("read -r -a 1x"));
        // printf: every `-v`, spelled apart or together.
        assert!(!opaque("printf -v x"));
        assert!(!opaque("printf -v x %s a"));
        assert!(opaque("printf -v x -v 1y %s a"));
        assert!(opaque("printf -v1y %s a"));
        assert!(!opaque("printf -- -v 1y"));
        // getopts OPTSTRING NAME; wait -p NAME.
        assert!(opaque("getopts ab 1x"));
        assert!(!opaque("getopts ab opt"));
        assert!(opaque("wait -p 1x"));
        assert!(!opaque("wait -n -p x"));
        // unset, but for functions (`-f`), whose names are not variables.
        assert!(opaque("unset 1x"));
        assert!(!opaque("unset -v x"));
        assert!(!opaque("unset -f my-func"));
        // test -v / -R NAME.
        assert!(opaque("test -v 1x"));
        assert!(opaque("[ -R 1x ]"));
        assert!(!opaque("[ -v x ]"));
        // let: arithmetic.
        assert!(opaque("read i; let i+1"));
        assert!(!opaque("i=1; let i+1"));
        // Options and their values are not names; `--` ends them.
        assert!(opaque("read -- -x"));
        assert!(!opaque("read -p 'enter: ' x"));
        // declare -i: the variable's every value is arithmetic.
        assert!(opaque("read x; declare -i x"));
        assert!(opaque("read x; declare -i 'x[0]'"));
        assert_eq!(
            analyze("declare -i x='$(id)'").opaque.as_deref(),
            Some("a command substitution inside an arithmetic expression")
        );
    }

    /// `shopt -s` with an option that changes what globs match.
    #[test]
    fn glob_options_turned_on() {
        assert!(opaque("shopt -s dotglob; rm *"));
        assert!(!opaque("shopt -u dotglob; rm *"));
        assert!(!opaque("shopt -s nullglob; rm *"));
    }
}
