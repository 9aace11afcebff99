//! The book under `docs/` (issue 47) cannot drift from the program:
//! - its reference pages are generated, the file formats from `runner
//!   schema KIND` (every property with its type, default and doc text)
//!   and the command line from `--help`; a page that differs from what
//!   the binary prints now is stale (`scripts/book-reference` rewrites
//!   them);
//! - every property of every schema has a doc text;
//! - every internal link of the book (and the README's into it) reaches a
//!   page, and a heading of it when it names one;
//! - every page is in `SUMMARY.md`, and the README stays a front page.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{repo, runner};

/// The file formats, their pages and titles.
const KINDS: &[(&str, &str, &str)] = &[
    ("task", "task.md", "Task files"),
    ("policy", "policy.md", "Policy files"),
    ("agent", "agent.md", "A child agent's run"),
    ("transcript", "transcript.md", "transcript.json"),
    ("events", "events.md", "Events (`--format json`)"),
    ("doctor", "doctor.md", "`runner doctor --format json`"),
];

fn book() -> PathBuf {
    repo().join("docs/src")
}

fn schema(kind: &str) -> Value {
    let out = runner().args(["schema", kind]).output().unwrap();
    assert!(out.status.success(), "runner schema {kind}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The one-line form of a schema's type: `string`, `integer or null`,
/// a link to a definition, `array of …`, or its values.
fn type_of(s: &Value) -> String {
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.rsplit('/').next().unwrap();
        return format!("[{name}](#{})", name.to_lowercase());
    }
    if let Some(c) = s.get("const") {
        return format!("`{c}`");
    }
    if let Some(values) = s.get("enum").and_then(Value::as_array) {
        let v: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
        return v.join(", ");
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(alts) = s.get(key).and_then(Value::as_array) {
            let v: Vec<String> = alts.iter().map(type_of).collect();
            return v.join(" or ");
        }
    }
    let one = |t: &str| match t {
        "array" => format!(
            "array of {}",
            s.get("items").map_or("anything".to_string(), type_of)
        ),
        "object" if s.get("additionalProperties").is_some_and(Value::is_object) => {
            format!("map of {}", type_of(&s["additionalProperties"]))
        }
        other => other.to_string(),
    };
    match &s["type"] {
        Value::String(t) => one(t),
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(one)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "any".to_string(),
    }
}

/// A doc text on one line of a table.
fn cell(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// The table of an object schema's properties; each one without a doc
/// text (a `const` tag says what it is) goes into `undocumented`.
fn properties(out: &mut String, name: &str, s: &Value, undocumented: &mut Vec<String>) {
    let Some(props) = s.get("properties").and_then(Value::as_object) else {
        return;
    };
    let required: BTreeSet<&str> = s
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    out.push_str(
        "\n| property | type | required | default | description |\n|---|---|---|---|---|\n",
    );
    for (p, v) in props {
        let doc = v.get("description").and_then(Value::as_str);
        if doc.is_none() && v.get("const").is_none() {
            undocumented.push(format!("{name}.{p}"));
        }
        let default = v
            .get("default")
            .filter(|d| !d.is_null())
            .map_or(String::new(), |d| format!("`{d}`"));
        let _ = writeln!(
            out,
            "| `{p}` | {} | {} | {default} | {} |",
            type_of(v),
            if required.contains(p.as_str()) {
                "yes"
            } else {
                ""
            },
            cell(doc.unwrap_or_default())
        );
    }
}

/// A schema's reference page; the properties without a doc text.
fn schema_page(kind: &str, title: &str) -> (String, Vec<String>) {
    let s = schema(kind);
    let mut out = format!(
        "# {title}\n\n<!-- Generated from `runner schema {kind}` by scripts/book-reference; do not edit. -->\n\n"
    );
    let mut undocumented = Vec::new();
    if let Some(d) = s.get("description").and_then(Value::as_str) {
        let _ = writeln!(out, "{d}");
    }
    properties(&mut out, kind, &s, &mut undocumented);
    alternatives(&mut out, kind, &s, &mut undocumented);
    for (name, def) in s
        .get("$defs")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let _ = writeln!(out, "\n## {name}\n");
        if let Some(d) = def.get("description").and_then(Value::as_str) {
            let _ = writeln!(out, "{d}");
        }
        if def.get("properties").is_none() && def.get("oneOf").is_none() {
            let _ = writeln!(out, "\nType: {}", type_of(def));
        }
        properties(&mut out, name, def, &mut undocumented);
        alternatives(&mut out, name, def, &mut undocumented);
    }
    (out, undocumented)
}

/// The alternatives of a `oneOf`/`anyOf` schema, each with its doc and
/// properties.
fn alternatives(out: &mut String, name: &str, s: &Value, undocumented: &mut Vec<String>) {
    for key in ["oneOf", "anyOf"] {
        let Some(alts) = s.get(key).and_then(Value::as_array) else {
            continue;
        };
        if s.get("properties").is_none() {
            out.push_str("\nOne of:\n");
        }
        for alt in alts {
            let doc = alt.get("description").and_then(Value::as_str);
            let _ = writeln!(
                out,
                "\n- {}{}",
                type_of(alt),
                doc.map_or(String::new(), |d| format!(": {}", cell(d)))
            );
            properties(out, name, alt, undocumented);
        }
    }
}

/// The subcommands `runner --help` lists.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

fn help(args: &[&str]) -> String {
    let out = runner().args(args).arg("--help").output().unwrap();
    assert!(out.status.success(), "{args:?} --help");
    String::from_utf8(out.stdout).unwrap()
}

/// The command-line reference: every command's `--help`.
fn cli_page() -> String {
    let top = help(&[]);
    let mut out = String::from(
        "# Command-line reference\n\n<!-- Generated from `runner --help` by scripts/book-reference; do not edit. -->\n\n",
    );
    let _ = write!(out, "```text\n{top}```\n");
    for sub in subcommands(&top) {
        let text = help(&[&sub]);
        let _ = write!(out, "\n## runner {sub}\n\n```text\n{text}```\n");
        for nested in subcommands(&text) {
            let text = help(&[&sub, &nested]);
            let _ = write!(out, "\n### runner {sub} {nested}\n\n```text\n{text}```\n");
        }
    }
    out
}

/// The reference pages as the binary says them now.
fn reference() -> (Vec<(PathBuf, String)>, Vec<String>) {
    let dir = book().join("reference");
    let mut pages = vec![(dir.join("cli.md"), cli_page())];
    let mut undocumented = Vec::new();
    for (kind, file, title) in KINDS {
        let (page, missing) = schema_page(kind, title);
        pages.push((dir.join(file), page));
        undocumented.extend(missing);
    }
    (pages, undocumented)
}

#[test]
fn the_reference_pages_are_what_the_binary_says() {
    let (pages, undocumented) = reference();
    assert!(
        undocumented.is_empty(),
        "properties without a doc comment: {undocumented:?}"
    );
    let update = std::env::var_os("RUNNER_BOOK_UPDATE").is_some();
    let mut stale = Vec::new();
    for (path, text) in pages {
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &text).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "stale (run scripts/book-reference): {stale:?}"
    );
}

/// Every property of every schema appears on its page with its doc text.
#[test]
fn every_schema_property_is_in_the_book_with_its_doc() {
    for (kind, file, _) in KINDS {
        let page = std::fs::read_to_string(book().join("reference").join(file)).unwrap();
        let s = schema(kind);
        let mut objects = vec![s.clone()];
        objects.extend(
            s["$defs"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(_, d)| d.clone()),
        );
        let mut seen = 0;
        for o in objects {
            for (p, v) in o["properties"].as_object().into_iter().flatten() {
                seen += 1;
                let doc = v["description"].as_str().map(cell).unwrap_or_default();
                assert!(
                    page.contains(&format!("| `{p}` |")) && page.contains(&doc),
                    "{kind}: `{p}` ({doc}) is not on {file}"
                );
            }
        }
        assert!(seen > 3, "{kind}: {seen} properties");
    }
}

/// The headings' anchors of a page (as mdBook and GitHub make them),
/// outside code blocks.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut fenced = false;
    for l in text.lines() {
        if l.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || !l.starts_with('#') {
            continue;
        }
        let title = l.trim_start_matches('#').trim().to_lowercase();
        let slug: String = title
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        out.insert(slug);
    }
    out
}

/// The `](target)` links of a page, outside code blocks.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for l in text.lines() {
        if l.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let mut rest = l;
        while let Some(i) = rest.find("](") {
            let tail = &rest[i + 2..];
            let end = tail.find(')').unwrap_or(tail.len());
            out.push(tail[..end].to_string());
            rest = &tail[end..];
        }
    }
    out
}

fn pages(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            pages(&p, out);
        } else if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
}

/// Whether `link` (from the page at `from`) reaches a page of the book,
/// and its heading when it names one; external and repository links are
/// not the book's.
fn broken(from: &Path, link: &str) -> Option<String> {
    if link.starts_with("http") || link.starts_with("mailto:") {
        return None;
    }
    let (file, anchor) = link.split_once('#').unwrap_or((link, ""));
    let target = if file.is_empty() {
        from.to_path_buf()
    } else {
        from.parent().unwrap().join(file)
    };
    let inside = target
        .canonicalize()
        .ok()
        .is_some_and(|t| t.starts_with(book().canonicalize().unwrap()));
    if !file.is_empty() && !file.ends_with(".md") {
        return (!target.exists()).then(|| format!("{link}: no such file"));
    }
    if !inside && !from.starts_with(repo().join("README.md")) {
        return Some(format!("{link}: not a page of the book"));
    }
    let Ok(text) = std::fs::read_to_string(&target) else {
        return Some(format!("{link}: no such page"));
    };
    (!anchor.is_empty() && !anchors(&text).contains(anchor))
        .then(|| format!("{link}: no heading `{anchor}` there"))
}

#[test]
fn every_internal_link_reaches_its_page_and_heading() {
    let mut all = Vec::new();
    pages(&book(), &mut all);
    all.push(repo().join("README.md"));
    let mut wrong = Vec::new();
    let mut checked = 0;
    for page in &all {
        let text = std::fs::read_to_string(page).unwrap();
        for link in links(&text) {
            checked += 1;
            if let Some(why) = broken(page, &link) {
                wrong.push(format!("{}: {why}", page.display()));
            }
        }
    }
    assert!(checked > 20, "{checked} links");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_page_is_in_the_summary_and_the_readme_is_a_front_page() {
    let summary = std::fs::read_to_string(book().join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<String> = links(&summary).into_iter().collect();
    let mut all = Vec::new();
    pages(&book(), &mut all);
    for p in all {
        let rel = p.strip_prefix(book()).unwrap().display().to_string();
        if rel != "SUMMARY.md" {
            assert!(listed.contains(&rel), "{rel} is not in SUMMARY.md");
        }
    }
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 250, "README.md has {lines} lines (at most 250)");
}
