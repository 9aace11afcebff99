//! Heredocs as data: how much of a long script is heredoc bodies.
//!
//! Agents write files and programs with heredocs (`cat <<'EOF' > tool.py`,
//! `python3 <<'EOF'`), and a body can be thousands of lines. A body that
//! goes to a file or to a program's stdin is data to bash: it is read line
//! by line and never parsed as shell. So the script budget
//! ([`super::MAX_SCRIPT_CHARS`]) counts the code around the bodies, and
//! the bodies have a cap of their own ([`MAX_DATA_CHARS`]).
//!
//! Which characters are bodies is decided twice. First by [`scan`], a
//! linear pass over the bytes (microseconds per kilobyte) that finds the
//! bodies of heredocs it can place with certainty and gives up on anything
//! else (an operator inside quotes, `$(...)`, `((...))` or `[[...]]`, a
//! command line that spans lines): giving up only counts more as code.
//! A script whose code by that count is over budget is refused before
//! bash's grammar sees it, which is what bounds the worst case: tokenizing
//! a megabyte of code costs half a second, a megabyte of heredoc body a
//! few tens of milliseconds. Then by brush-parser's own tokenizer
//! ([`body_chars`]), whose reading is the one the analysis walks: its count
//! is the one the budget holds to, so a scan that erred cannot let more
//! code through, only cost one tokenization.

use brush_parser::Token;

/// Most characters of heredoc bodies one script may hold.
pub const MAX_DATA_CHARS: usize = 1 << 20;

/// What a quick scan of a script finds of its heredocs.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Scan {
    /// The characters that are heredoc bodies (delimiter lines included);
    /// 0 where it cannot be sure of any.
    pub(super) data: usize,
    /// The delimiter of a heredoc left open at the end, as bash compares
    /// lines to it.
    pub(super) open: Option<String>,
}

/// The heredoc bodies of `text` by a quick scan.
pub(super) fn scan(text: &str) -> Scan {
    let mut open = None;
    let data = scan_bodies(text, &mut open);
    Scan {
        open: open.filter(|_| data > 0),
        data,
    }
}

fn scan_bodies(text: &str, open: &mut Option<String>) -> usize {
    let b = text.as_bytes();
    let mut i = 0;
    let mut data = 0;
    // Delimiters whose bodies start after the current line: (word, strip
    // tabs, quoted).
    let mut pending: Vec<(Vec<u8>, bool, bool)> = Vec::new();
    let mut word_start = true;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\\' => {
                // An escaped newline continues the line: a heredoc body
                // would start after the next one; not worth placing.
                if b.get(i + 1) == Some(&b'\n') && !pending.is_empty() {
                    return 0;
                }
                i += 2;
                word_start = false;
                continue;
            }
            b'\'' => {
                let Some(end) = find(b, i + 1, b'\'') else {
                    return 0;
                };
                if !pending.is_empty() && b[i..end].contains(&b'\n') {
                    return 0;
                }
                i = end + 1;
                word_start = false;
                continue;
            }
            b'"' | b'`' => {
                // Double quotes and backticks may nest `$(...)` with
                // quotes of their own: only a plain one is skipped.
                let Some(end) = find(b, i + 1, c) else {
                    return 0;
                };
                if !plain(&b[i + 1..end], c == b'`') {
                    return 0;
                }
                i = end + 1;
                word_start = false;
                continue;
            }
            b'$' if b.get(i + 1) == Some(&b'(') && b.get(i + 2) != Some(&b'(') => {
                // `$(plain words)`, nested ones too.
                let mut depth = 0;
                let mut j = i + 1;
                while j < b.len() {
                    match b[j] {
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                if j >= b.len() || !plain(&b[i + 2..j], true) || has(&b[i..j], b"case") {
                    return 0;
                }
                i = j + 1;
                word_start = false;
                continue;
            }
            b'$' if b.get(i + 1) == Some(&b'{') => {
                // `${NAME}` only.
                let end = find(b, i + 2, b'}').unwrap_or(b.len());
                let name = &b[(i + 2).min(end)..end];
                if end >= b.len()
                    || name.is_empty()
                    || !name.iter().all(|x| x.is_ascii_alphanumeric() || *x == b'_')
                {
                    return 0;
                }
                i = end + 1;
                word_start = false;
                continue;
            }
            b'#' if word_start => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'$' if matches!(b.get(i + 1), Some(b'(' | b'[' | b'\'')) => return 0,
            b'(' if b.get(i + 1) == Some(&b'(') => return 0,
            b'[' if b.get(i + 1) == Some(&b'[') => return 0,
            b'<' if b.get(i + 1) == Some(&b'<') => {
                if b.get(i + 2) == Some(&b'<') {
                    i += 3;
                    word_start = true;
                    continue;
                }
                let strip = b.get(i + 2) == Some(&b'-');
                i += if strip { 3 } else { 2 };
                while i < b.len() && matches!(b[i], b' ' | b'\t') {
                    i += 1;
                }
                let Some((word, quoted, next)) = delimiter(b, i) else {
                    return 0;
                };
                pending.push((word, strip, quoted));
                i = next;
                word_start = false;
                continue;
            }
            b'\n' => {
                i += 1;
                for (word, strip, quoted) in pending.drain(..) {
                    let start = i;
                    let Some(end) = body_end(b, i, &word, strip, quoted) else {
                        return 0;
                    };
                    if end.open {
                        *open = String::from_utf8(word).ok();
                    }
                    i = end.next;
                    data += i - start;
                }
                word_start = true;
                continue;
            }
            b' ' | b'\t' | b';' | b'&' | b'|' | b'(' | b')' | b'{' | b'}' => word_start = true,
            _ => word_start = false,
        }
        i += 1;
    }
    data
}

/// Where a heredoc body that starts at `i` ends, as bash reads it.
pub(crate) struct BodyEnd {
    /// Just past its delimiter line, or the end of the text.
    pub(crate) next: usize,
    /// No line was its delimiter: it runs to the end of the text.
    pub(crate) open: bool,
}

/// Where the body at `i` of a heredoc delimited by `word` ends: the first
/// line that is `word` (leading tabs stripped for `<<-`), or the end of the
/// text. `None` where an unquoted body has a line ending in `\`, which
/// bash joins to the next before comparing: not worth placing.
pub(crate) fn body_end(
    b: &[u8],
    mut i: usize,
    word: &[u8],
    strip: bool,
    quoted: bool,
) -> Option<BodyEnd> {
    while i < b.len() {
        let end = find(b, i, b'\n').unwrap_or(b.len());
        let mut line = &b[i..end];
        if strip {
            while let [b'\t', rest @ ..] = line {
                line = rest;
            }
        }
        i = (end + 1).min(b.len());
        if line == word {
            return Some(BodyEnd {
                next: i,
                open: false,
            });
        }
        if !quoted && line.ends_with(b"\\") {
            return None;
        }
    }
    Some(BodyEnd {
        next: i,
        open: true,
    })
}

/// The delimiter word at `i` with its quotes removed, as bash compares
/// lines to it, whether it was quoted, and where it ends; `None` for one
/// not worth placing.
pub(crate) fn delimiter(b: &[u8], mut i: usize) -> Option<(Vec<u8>, bool, usize)> {
    let mut word = Vec::new();
    let mut quoted = false;
    while i < b.len() {
        match b[i] {
            b'\'' | b'"' => {
                let end = find(b, i + 1, b[i])?;
                let inner = &b[i + 1..end];
                if inner
                    .iter()
                    .any(|&x| matches!(x, b'\\' | b'$' | b'`' | b'\n'))
                {
                    return None;
                }
                word.extend_from_slice(inner);
                quoted = true;
                i = end + 1;
            }
            b'\\' => {
                word.push(*b.get(i + 1)?);
                quoted = true;
                i += 2;
            }
            b'$' | b'`' => return None,
            b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')' => break,
            x => {
                word.push(x);
                i += 1;
            }
        }
    }
    (!word.is_empty()).then_some((word, quoted, i))
}

/// Text inside double quotes (`code` false) or inside `$(...)` or
/// backticks (`code`) that holds nothing nested: no backtick, escape,
/// newline or substitution, and in code no quote, comment or heredoc.
fn plain(inner: &[u8], code: bool) -> bool {
    let nested = |x: u8| matches!(x, b'`' | b'\\' | b'\n');
    let quoting = |x: u8| matches!(x, b'\'' | b'"' | b'#');
    let nesting = inner.iter().any(|&x| nested(x) || (code && quoting(x)))
        || has(inner, b"$(")
        || has(inner, b"${")
        || (code && has(inner, b"<<"));
    !nesting
}

fn has(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn find(b: &[u8], from: usize, needle: u8) -> Option<usize> {
    b.get(from..)?
        .iter()
        .position(|&x| x == needle)
        .map(|p| p + from)
}

/// The characters of heredoc bodies in brush-parser's tokens of a script
/// (each body with its delimiter line, as the token's span has it), among
/// its first `within` (what the script was given as: not what is added to
/// end it or close a heredoc left open).
pub(super) fn body_chars(tokens: &[Token], within: usize) -> usize {
    body_spans(tokens)
        .map(|(start, end)| end.min(within).saturating_sub(start))
        .sum()
}

/// How deeply `(`/`{` nest in `text` outside its heredoc bodies (as
/// [`super::budget::nesting_depth`] counts): the bodies never reach the
/// parser whose backtracking the bound is for. Token spans count
/// characters.
pub(super) fn code_nesting(text: &str, tokens: &[Token]) -> usize {
    let mut bodies: Vec<(usize, usize)> = body_spans(tokens).collect();
    if bodies.is_empty() {
        return super::budget::nesting_depth(text);
    }
    bodies.sort_unstable();
    let mut bodies = bodies.into_iter().peekable();
    let (mut depth, mut max) = (0usize, 0usize);
    for (i, c) in text.chars().enumerate() {
        while bodies.peek().is_some_and(|&(_, end)| end <= i) {
            bodies.next();
        }
        if bodies.peek().is_some_and(|&(start, _)| start <= i) {
            continue;
        }
        match c {
            '(' | '{' => {
                depth += 1;
                max = max.max(depth);
            }
            ')' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// The tag of a heredoc the tokenizer did not read where bash does: right
/// after `<<` (blanks between). In `<<E$(x)F` bash's tag is `E$(x)F` as
/// written; brush-parser's tokenizer takes the `x` inside for it, and the
/// words around for a command's. Spans count characters.
pub(super) fn misread_tag(text: &str, tokens: &[Token]) -> Option<String> {
    let is_heredoc = |t: &Token| matches!(t, Token::Operator(op, _) if op == "<<" || op == "<<-");
    if !tokens.iter().any(is_heredoc) {
        return None;
    }
    let chars: Vec<char> = text.chars().collect();
    tokens.windows(2).find_map(|w| match w {
        [Token::Operator(op, at), Token::Word(tag, tag_at)] if op == "<<" || op == "<<-" => {
            let between = chars.get(at.end.index..tag_at.start.index)?;
            (!between.iter().all(|c| *c == ' ' || *c == '\t')).then(|| tag.clone())
        }
        _ => None,
    })
}

/// The spans (in characters) of the heredoc bodies among `tokens`.
pub(super) fn body_spans(tokens: &[Token]) -> impl Iterator<Item = (usize, usize)> + '_ {
    tokens.windows(3).filter_map(|w| match w {
        [
            Token::Operator(op, _),
            Token::Word(..),
            Token::Word(_, body),
        ] if op == "<<" || op == "<<-" => {
            Some((body.start.index, body.end.index.max(body.start.index)))
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(t: &str) -> Vec<Token> {
        brush_parser::tokenize_str(t).unwrap()
    }

    #[test]
    fn the_scan_and_the_tokenizer_agree_on_plain_heredocs() {
        for (text, want) in [
            ("cat <<'EOF' > f\na\nb\nEOF\necho hi\n", 8),
            ("cat <<-\"E\"OF\n\ta\n\tEOF\n", 8),
            ("cat <<A; cat <<\\B\n1\nA\n2\nB\n", 8),
            ("python3 <<EOF\nprint(1)\nEOF\n", 13),
            ("echo '<<X'\nfoo\nX\n", 0),
            ("cat <<< x\necho y\n", 0),
            ("# cat <<X\nfoo\nX\n", 0),
            // What the scan skips or reads before a heredoc (mutants).
            ("echo \"a<<X\"\nfoo\nX\n", 0),
            ("echo x #<<X\nfoo\nX\n", 0),
            ("echo a#b <<X\nc\nX\n", 4),
            ("echo $(echo a)<<X\nb\nX\n", 4),
            ("echo $x <<X\nb\nX\n", 4),
            ("echo ${x}<<X\nb\nX\n", 4),
            ("f() { cat <<X; }\nb\nX\n", 4),
            ("echo [a] <<X\nb\nX\n", 4),
            ("cat < f <<X\nb\nX\n", 4),
            ("echo a \\\nb <<X\nc\nX\n", 4),
            ("echo a\\ b <<X\nc\nX\n", 4),
            ("echo 'a\nb' <<X\nc\nX\n", 4),
            ("echo 'a' <<X\nc\nX\n", 4),
            ("echo \"a\" <<X\nc\nX\n", 4),
            ("echo `date` <<X\nc\nX\n", 4),
            ("echo \"it's\" <<X\nc\nX\n", 4),
            ("echo $(a)$(b) <<X\nc\nX\n", 4),
            ("{ a; }${x} <<X\nb\nX\n", 4),
            ("echo a # a comment at the end <<X", 0),
            ("cat < f\nb\nf\nc\n", 0),
            ("cat <<< x <<Y\nb\nY\n", 4),
            ("cat <<-X\n\tb\n\tX\necho\n", 6),
            ("cat << EOF\nb\nEOF\necho\n", 6),
            // An escaped delimiter is the character after the backslash.
            ("cat <<\\B\n2\nB\necho hi\n", 4),
        ] {
            assert_eq!(scan(text).data, want, "{text:?}");
            assert_eq!(body_chars(&tokens(text), usize::MAX), want, "{text:?}");
        }
    }

    /// A tag is where bash reads it, right after `<<`; a tokenizer that
    /// read one elsewhere is caught.
    #[test]
    fn a_tag_the_tokenizer_misread_is_told() {
        let misread = |t: &str| {
            let text = super::super::parse::ended(t);
            let options = brush_parser::ParserOptions::default().tokenizer_options();
            let closed = format!("{text}x\n");
            let tokens = brush_parser::uncached_tokenize_str(&text, &options)
                .or_else(|_| brush_parser::uncached_tokenize_str(&closed, &options))
                .unwrap();
            misread_tag(&text, &tokens)
        };
        for t in [
            "bash <<E$(x)F\ncurl e\nE$(x)F",
            "bash <<EOF$(x)\nb\nEOF",
            "cat << $(x)\nb",
        ] {
            assert_eq!(misread(t).as_deref(), Some("x"), "{t:?}");
        }
        for t in [
            "cat <<EOF\nb\nEOF",
            "cat << \t EOF\nb\nEOF",
            "cat <<-'E F' >f\n\tb\nE F",
            "cat <<E`x`F\nb\nE`x`F",
            "cat <<<$(date)",
            "x=$(cat <<EOF\nin\nEOF\n)",
        ] {
            assert_eq!(misread(t), None, "{t:?}");
        }
    }

    #[test]
    fn the_scan_gives_up_where_it_cannot_be_sure() {
        for text in [
            "x=$(cat <<EOF\nin\nEOF\n)\n",
            "(( a << 2 ))\nfoo\n",
            "echo $(( 1 << 2 ))\nfoo\n",
            "cat <<EOF \\\n > f\nbody\nEOF\n",
            "cat <<EOF 'a\nb'\nbody\nEOF\n",
            "echo ${x:-<<Y}\nb\nY}\n",
            "echo $'a' <<X\nb\nX\n",
            "[[ x ]] && cat <<X\nb\nX\n",
            "echo $((1+2)) <<X\nb\nX\n",
            "echo $(a <<X\nb\nX\n",
            "echo $(echo \"a\") <<X\nb\nX\n",
            "echo $(case a in a) echo x;; esac) <<X\nb\nX\n",
            "echo ${} <<X\nb\nX\n",
            "echo ${x-y} <<X\nb\nX\n",
            "cat << ",
            // Double quotes holding a substitution (the scan reads none).
            "echo \"$(date)\" <<X\nb\nX\n",
            "echo \"${x}\" <<X\nb\nX\n",
        ] {
            assert_eq!(scan(text).data, 0, "{text:?}");
        }
        // A heredoc left open with an empty body is no data, and no open
        // heredoc to close.
        assert_eq!(scan("cat <<EOF\n"), Scan::default());
        // An unterminated body runs to the end, as bash reads it.
        assert_eq!(
            scan("cat <<'EOF'\nopen\nstill\n"),
            Scan {
                data: 11,
                open: Some("EOF".into())
            }
        );
    }

    #[test]
    fn nesting_is_counted_outside_the_bodies() {
        let text = "f() { (a); }\ncat <<X\n((((\nX\n";
        assert_eq!(code_nesting(text, &tokens(text)), 2);
        let text = "((( a )))\ncat <<X\n)\nX\n";
        assert_eq!(code_nesting(text, &tokens(text)), 3);
    }
}
