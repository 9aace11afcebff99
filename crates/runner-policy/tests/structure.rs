//! The shape the engine keeps as it grows: no file over 500 lines, no
//! import cycle between its files, and none of the runner's heavy
//! dependencies (async runtime, HTTP, MCP, command line) among its own.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 500;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, by its module path (`shell::walk`,
/// `programs` for `programs/mod.rs`, `` for lib.rs).
fn modules(dir: &Path, prefix: &[String], out: &mut BTreeMap<Vec<String>, PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            let mut next = prefix.to_vec();
            next.push(name);
            modules(&p, &next, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let mut m = prefix.to_vec();
            if name != "mod" && name != "lib" {
                m.push(name);
            }
            out.insert(m, p);
        }
    }
}

/// The paths a `use` tree names: `a::{b, c::d}` gives `a::b`, `a::c::d`.
fn expand_use(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        return vec![tree.split(" as ").next().unwrap().trim().to_string()];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap()];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(expand_use)
        .map(|p| {
            if p == "self" {
                prefix.trim_end_matches("::").to_string()
            } else {
                format!("{prefix}{p}")
            }
        })
        .collect()
}

/// The files a file imports from, by module path, outside its tests.
fn imports(
    module: &[String],
    text: &str,
    all: &BTreeMap<Vec<String>, PathBuf>,
) -> BTreeSet<Vec<String>> {
    let code = text.split("#[cfg(test)]").next().unwrap();
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("use ") {
        let at_line_start = i == 0 || rest[..i].ends_with('\n') || rest[..i].ends_with("pub ");
        let end = rest[i..].find(';').map(|e| i + e).unwrap_or(rest.len());
        let stmt = &rest[i + 4..end];
        rest = &rest[end..];
        if !at_line_start {
            continue;
        }
        for path in expand_use(&stmt.replace(char::is_whitespace, "")) {
            let segs: Vec<&str> = path.split("::").collect();
            let mut target: Vec<String> = match segs[0] {
                "crate" => vec![],
                "super" => module[..module.len().saturating_sub(1)].to_vec(),
                "self" => module.to_vec(),
                // A child module named in its parent's `use` (`use walk::X`).
                s if all.contains_key(&[module, &[s.to_string()]].concat()) => module.to_vec(),
                _ => continue,
            };
            let skip = usize::from(matches!(segs[0], "crate" | "super" | "self"));
            for s in &segs[skip..] {
                target.push(s.to_string());
            }
            // The longest prefix that is a file is the file imported from.
            while !target.is_empty() && !all.contains_key(&target) {
                target.pop();
            }
            if target.as_slice() != module {
                out.insert(target);
            }
        }
    }
    out
}

#[test]
fn no_file_over_500_lines_and_no_import_cycle() {
    let mut all = BTreeMap::new();
    modules(&src(), &[], &mut all);
    assert!(all.len() > 20, "read {} files", all.len());
    let mut graph = BTreeMap::new();
    for (m, p) in &all {
        let text = std::fs::read_to_string(p).unwrap();
        let lines = text.lines().count();
        assert!(
            lines <= MAX_LINES,
            "{} has {lines} lines (at most {MAX_LINES})",
            p.display()
        );
        graph.insert(m.clone(), imports(m, &text, &all));
    }
    // Depth-first search for a back edge.
    fn visit(
        m: &Vec<String>,
        g: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        done: &mut BTreeSet<Vec<String>>,
        path: &mut Vec<Vec<String>>,
    ) {
        if done.contains(m) {
            return;
        }
        if let Some(i) = path.iter().position(|p| p == m) {
            let cycle: Vec<String> = path[i..].iter().map(|p| p.join("::")).collect();
            panic!("import cycle: {} -> {}", cycle.join(" -> "), m.join("::"));
        }
        path.push(m.clone());
        for n in g.get(m).into_iter().flatten() {
            visit(n, g, done, path);
        }
        path.pop();
        done.insert(m.clone());
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        visit(m, &graph, &mut done, &mut Vec::new());
    }
}

#[test]
fn the_cycle_check_sees_imports() {
    // The parser this test relies on, on the shapes the crate uses.
    let mut all = BTreeMap::new();
    for m in [
        &["shell"][..],
        &["shell", "walk"],
        &["shell", "state"],
        &["words"],
    ] {
        all.insert(m.iter().map(|s| s.to_string()).collect(), PathBuf::new());
    }
    let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let got = imports(
        &v(&["shell", "walk"]),
        "use super::state::{A, B};\nuse crate::words::{self, base_name};\n",
        &all,
    );
    assert_eq!(got, [v(&["shell", "state"]), v(&["words"])].into());
    let got = imports(
        &v(&["shell"]),
        "use state::Walker;\npub use walk::X;\n",
        &all,
    );
    assert_eq!(got, [v(&["shell", "state"]), v(&["shell", "walk"])].into());
}

#[test]
fn no_runtime_http_mcp_or_cli_dependency() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "-p",
            "runner-policy",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8(out.stdout).unwrap();
    assert!(tree.contains("brush-parser"), "{tree}");
    for banned in ["tokio", "reqwest", "rmcp", "clap"] {
        assert!(
            !tree.lines().any(|l| l.split(' ').next() == Some(banned)),
            "runner-policy depends on {banned}:\n{tree}"
        );
    }
}
