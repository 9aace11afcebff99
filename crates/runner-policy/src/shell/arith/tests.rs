use super::*;

#[test]
fn names_read_by_arithmetic() {
    assert_eq!(names_in_arithmetic("i++"), ["i"]);
    assert_eq!(names_in_arithmetic("$n + 0x1F * 16#ff"), ["n"]);
    assert_eq!(
        names_in_arithmetic("a[i] + ${b} - $1"),
        ["a", "i", "b", "@"]
    );
    assert!(names_in_arithmetic("1 + 2").is_empty());
    // A number ends where its characters do.
    assert_eq!(names_in_arithmetic("1+x"), ["x"]);
    assert_eq!(names_in_arithmetic("0x1_f+y"), ["y"]);
    // Positional parameters in every spelling, and what follows them.
    for t in ["$1", "$@", "$*", "${1}", "${@}", "${*}", "${#1}", "${!1}"] {
        assert_eq!(names_in_arithmetic(t), ["@"], "{t}");
    }
    assert_eq!(names_in_arithmetic(" $1x"), ["@", "x"]);
    assert_eq!(names_in_arithmetic("$? + $#"), Vec::<String>::new());
}

/// Where a value's text comes from: substitutions and positional
/// parameters are run-time values; every name it spells is a copy.
#[test]
fn the_origin_of_a_values_text() {
    let o = |t: &str| {
        let o = origin_of_text(t);
        (o.runtime, o.copies)
    };
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(o("plain"), (false, names(&["plain"])));
    assert_eq!(o("$(x)"), (true, names(&["x"])));
    assert_eq!(o("`x`"), (true, names(&["x"])));
    assert_eq!(o("$x"), (false, names(&["x", "x"])));
    assert_eq!(o("${ab_c9}"), (false, names(&["ab_c9", "ab_c9"])));
    assert_eq!(o("${!p}"), (false, names(&["p", "p"])));
    assert_eq!(o("a$1"), (true, names(&["a", "@"])));
    assert_eq!(o("$@"), (true, names(&["@"])));
    assert_eq!(o("$*"), (true, names(&["@"])));
    assert_eq!(o("$?"), (false, names(&[])));
}

/// Whether `((...))` closes as arithmetic, with quotes read as
/// plain characters and as quotes.
#[test]
fn arithmetic_or_a_subshell() {
    assert_eq!(arithmetic_readings("((1+2))", "(("), (true, true));
    assert_eq!(arithmetic_readings("(( x == '1' ))", "(("), (true, true));
    assert_eq!(arithmetic_readings("(( a == ')' ))", "(("), (false, true));
    assert_eq!(arithmetic_readings("(( a == \")\" ))", "(("), (false, true));
    assert_eq!(arithmetic_readings("(( \"a\\\")\" ))", "(("), (false, true));
    // A backslash escapes outside quotes and inside double ones, not
    // inside single ones.
    assert_eq!(arithmetic_readings("(( a == \\) ))", "(("), (false, true));
    assert_eq!(arithmetic_readings("(( a == '\\' ))", "(("), (true, true));
    assert_eq!(arithmetic_readings("((a) )", "(("), (false, false));
    assert_eq!(arithmetic_readings("$((a))", "(("), (false, false));
}

/// Name operands: what is no name is opaque; a subscript is
/// arithmetic.
#[test]
fn variable_name_operands() {
    let why = |s: &str| crate::shell::analyze(s).opaque;
    assert!(why("read 1x").is_some_and(|w| w.contains("`1x` is not a variable name")));
    assert!(why("read 'a[x'").is_some_and(|w| w.contains("is not a variable name")));
    assert!(why("read x]").is_some_and(|w| w.contains("is not a variable name")));
    assert_eq!(why("read x; unset 'a[1]'"), None);
    assert_eq!(why("read -r line"), None);
    // A subscript of a name operand is arithmetic: a run-time value
    // there is evaluated.
    assert!(why("read i; unset 'a[i]'").is_some());
    // A word compared as a number is arithmetic too.
    assert!(why("read a; [[ a -eq 1 ]]").is_some());
    assert_eq!(why("read a; [[ b -eq 1 ]]"), None);
}

/// Where a parameter's value comes from, and the arithmetic in its
/// subscript and offset.
#[test]
fn parameters_and_their_subscripts() {
    let opaque = |s: &str| crate::shell::analyze(s).opaque.is_some();
    assert!(opaque("x=$1; (( x ))"));
    assert!(opaque("x=$@; (( x ))"));
    assert!(opaque("x=$*; (( x ))"));
    assert!(!opaque("y=1; x=$y; (( x ))"));
    assert!(!opaque("x=$?; (( x ))"));
    assert!(!opaque("x=$$; (( x ))"));
    // A subscript, and the offset after it, are arithmetic.
    assert!(opaque("read i; echo ${a[i]}"));
    assert!(opaque("read i; echo ${a[0]:i}"));
    assert!(opaque("read i; echo ${a[b[0]]:i}"));
    assert!(!opaque("read i; echo ${a[0]:1}"));
    assert!(!opaque("read i; echo ${a[@]}"));
}

/// Substitutions inside arithmetic and parameter expansions, and
/// indirection through positional parameters.
#[test]
fn code_inside_expansions() {
    let why = |s: &str| crate::shell::analyze(s).opaque.unwrap_or_default();
    assert_eq!(
        why("(( x <(1) ))"),
        "a command substitution inside an arithmetic expression"
    );
    assert_eq!(
        why("echo ${a[$(id)]}"),
        "a command substitution inside a parameter expansion"
    );
    assert_eq!(
        why("echo ${a[`id`]}"),
        "a command substitution inside a parameter expansion"
    );
    // `${!1}`, `${!@}`, `${!*}` read a positional parameter's value as
    // a name (`f 'a[$(id)]'` runs `id`); `${!#}` does not.
    for s in [
        "f() { echo \"${!1}\"; }; f 'a[$(id)]'",
        "echo ${!2}",
        "echo ${!@}",
        "echo ${!*}",
    ] {
        assert!(why(s).contains("`@`"), "{s}: {}", why(s));
    }
    assert_eq!(why("echo ${!#}"), "");
    assert_eq!(why("x=1; echo ${!x}"), "");
}

#[test]
fn numeric_substitutions() {
    assert!(!Walker::numeric_substitution("wc -l < $(echo f)"));
    assert!(Walker::numeric_substitution("nproc"));
    assert!(Walker::numeric_substitution("git ls-files | wc -l"));
    assert!(Walker::numeric_substitution("wc -l < f"));
    assert!(!Walker::numeric_substitution("wc -l *"));
    assert!(!Walker::numeric_substitution("cat f"));
    assert!(!Walker::numeric_substitution("cat f; nproc"));
}
