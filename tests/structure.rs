//! The shape the whole workspace keeps as it grows (issue 43), for each of
//! its crates:
//! - no source file over 500 lines, its tests included (a module's tests
//!   may be a file of their own: `tests.rs`, not counted), and no bench
//!   over 500;
//! - no import circle between its files: each names the files it takes
//!   from by `use` and by path (`crate::a::B`, `super::C`, `child::D`);
//! - no `Result<_, String>` outside tests: an error is a type that says
//!   what went wrong;
//! - every HTTP client of the runner built through `net::tls` (reqwest is
//!   built without a TLS provider and panics on a client built before
//!   one is installed).
//!
//! The engine crate's own test (crates/runner-policy/tests/structure.rs)
//! keeps its dependencies light; this one holds the shape of all three.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 500;

/// Each crate's source folder, from the workspace's root.
const CRATES: &[&str] = &[
    "src",
    "crates/runner-policy/src",
    "crates/runner-output/src",
];

type Module = Vec<String>;

/// Every `.rs` file under `dir` by its module path (`run::task::attempts`;
/// `run::task` for `run/task/mod.rs`; the crate root for lib.rs). The
/// binary's `main.rs` is a crate of its own and is left out, as are
/// modules of tests.
fn modules(dir: &Path, prefix: &[String], out: &mut BTreeMap<Module, PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            let mut next = prefix.to_vec();
            next.push(name);
            modules(&p, &next, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            if name == "tests" || (prefix.is_empty() && name == "main") {
                continue;
            }
            let mut m = prefix.to_vec();
            if name != "mod" && name != "lib" {
                m.push(name);
            }
            out.insert(m, p);
        }
    }
}

/// A file's code outside its tests, without comments (a doc link names a
/// path it does not import).
fn code_of(text: &str) -> String {
    let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
    code.lines()
        .map(|l| match l.find("//") {
            // A `//` in a string (`"http://..."`) cuts the rest of its line
            // only: no path there is lost but one after it on that line.
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
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

/// The statement `stmt` (text between two `;`) as a `use`: whether it is a
/// re-export (`pub use`: names for others, not a use of this file's), and
/// its tree.
fn use_of(stmt: &str) -> Option<(bool, &str)> {
    let s = stmt.trim_start_matches(|c: char| c.is_whitespace() || c == '{' || c == '}');
    if let Some(tree) = s.strip_prefix("use ") {
        return Some((false, tree));
    }
    if let Some(tree) = s.strip_prefix("pub use ") {
        return Some((true, tree));
    }
    let k = s.strip_prefix("pub(")?.find(") use ")?;
    Some((true, &s[4 + k + 6..]))
}

/// The `use` statements of `code`: each path (`a::B`, `a::B as C`), and
/// whether it is a re-export.
fn use_statements(code: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for stmt in code.split(';') {
        let Some((public, tree)) = use_of(stmt) else {
            continue;
        };
        let tree = tree.split_whitespace().collect::<Vec<_>>().join(" ");
        let tree = [
            (" ::", "::"),
            (":: ", "::"),
            ("{ ", "{"),
            (" }", "}"),
            (" ,", ","),
            (", ", ","),
        ]
        .iter()
        .fold(tree, |t, (a, b)| t.replace(a, b));
        for path in expand_use(&tree) {
            out.push((path, public));
        }
    }
    out
}

/// What a crate's files name: each file's `use` statements by the name
/// they bring in (a path through a re-export or an import is followed to
/// the file that defines the item).
struct Crate {
    files: BTreeMap<Module, PathBuf>,
    /// Per file: name brought in -> the path it stands for.
    names: BTreeMap<Module, BTreeMap<String, String>>,
}

impl Crate {
    fn new(files: BTreeMap<Module, PathBuf>, codes: &BTreeMap<Module, String>) -> Self {
        let names = codes
            .iter()
            .map(|(m, code)| {
                let named = use_statements(code)
                    .into_iter()
                    .filter_map(|(path, _)| {
                        let (path, alias) = match path.split_once(" as ") {
                            Some((p, a)) => (p.to_string(), a.to_string()),
                            None => (path.clone(), path.rsplit("::").next()?.to_string()),
                        };
                        (alias != "*").then_some((alias, path))
                    })
                    .collect();
                (m.clone(), named)
            })
            .collect();
        Self { files, names }
    }

    /// The file that defines what `path` names from `module`
    /// (`crate::a::B`, `super::C`, `child::D`), if it is one of the
    /// crate's files.
    fn file_named(&self, path: &str, module: &[String], depth: usize) -> Option<Module> {
        let all = &self.files;
        let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        let mut target: Module = match *segs.first()? {
            "crate" => vec![],
            "super" | "self" => module.to_vec(),
            child if all.contains_key(&[module, &[child.to_string()]].concat()) => module.to_vec(),
            _ => return None,
        };
        let mut rest = &segs[..];
        if segs[0] == "crate" || segs[0] == "self" {
            rest = &segs[1..];
        }
        while let Some((&"super", tail)) = rest.split_first() {
            target.pop();
            rest = tail;
        }
        let mut used = 0;
        let mut found = target.clone();
        for (k, s) in rest.iter().enumerate() {
            target.push(s.to_string());
            if all.contains_key(&target) {
                found = target.clone();
                used = k + 1;
            }
        }
        // An item the file imports or re-exports: the file it comes from.
        if let Some(name) = rest.get(used)
            && depth < 8
            && let Some(via) = self.names.get(&found).and_then(|n| n.get(*name))
        {
            let mut next = via.clone();
            for s in &rest[used + 1..] {
                next.push_str("::");
                next.push_str(s);
            }
            if let Some(f) = self.file_named(&next, &found, depth + 1) {
                return Some(f);
            }
        }
        Some(found)
    }

    /// The files `module` takes from (not those it only re-exports).
    fn imports(&self, module: &[String], code: &str) -> BTreeSet<Module> {
        let mut out = BTreeSet::new();
        for (path, public) in use_statements(code) {
            if !public {
                let path = path.split(" as ").next().unwrap_or(&path).to_string();
                out.extend(self.file_named(&path, module, 0));
            }
        }
        // Paths in the code: `crate::a::b(..)`, `super::C`, `child::f()`;
        // `use` statements skipped (read above).
        let code: String = code
            .split(';')
            .filter(|stmt| use_of(stmt).is_none())
            .collect::<Vec<_>>()
            .join(";");
        let bytes = code.as_bytes();
        let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        let mut i = 0;
        while i < bytes.len() {
            let starts =
                ident(bytes[i]) && (i == 0 || !(ident(bytes[i - 1]) || bytes[i - 1] == b':'));
            if !starts {
                i += 1;
                continue;
            }
            let mut j = i;
            while j < bytes.len() && (ident(bytes[j]) || bytes[j] == b':') {
                j += 1;
            }
            let path = &code[i..j];
            if path.contains("::") {
                out.extend(self.file_named(path, module, 0));
            }
            i = j;
        }
        out.remove(module);
        out
    }
}

/// The `Result<_, String>` types in `code`.
fn string_errors(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("Result<") {
        let inner_start = i + "Result<".len();
        let mut depth = 1;
        let mut comma = None;
        let mut end = None;
        for (k, c) in rest[inner_start..].char_indices() {
            match c {
                '<' | '(' | '[' => depth += 1,
                '>' | ')' | ']' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(inner_start + k);
                        break;
                    }
                }
                ',' if depth == 1 => comma = Some(inner_start + k),
                _ => {}
            }
        }
        let Some(end) = end else { break };
        if let Some(c) = comma
            && rest[c + 1..end].trim() == "String"
        {
            found.push(rest[i..=end].to_string());
        }
        rest = &rest[inner_start..];
    }
    found
}

/// The circles of `graph`: each set of files that import one another.
fn circles(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<BTreeSet<Module>> {
    let reach = |from: &Module| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(m) = todo.pop() {
            for n in graph.get(&m).into_iter().flatten() {
                if seen.insert(n.clone()) {
                    todo.push(n.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&Module, BTreeSet<Module>> =
        graph.keys().map(|m| (m, reach(m))).collect();
    let mut out: Vec<BTreeSet<Module>> = Vec::new();
    for (m, r) in &reached {
        if !r.contains(*m) || out.iter().any(|c| c.contains(*m)) {
            continue;
        }
        let circle = r
            .iter()
            .filter(|n| reached.get(n).is_some_and(|back| back.contains(*m)))
            .cloned()
            .collect();
        out.push(circle);
    }
    out
}

fn name(m: &Module) -> String {
    if m.is_empty() {
        "crate".into()
    } else {
        m.join("::")
    }
}

#[test]
fn small_files_no_circles_typed_errors() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut problems = Vec::new();
    let mut files = 0;
    for dir in CRATES {
        let mut all = BTreeMap::new();
        modules(&root.join(dir), &[], &mut all);
        files += all.len();
        let mut codes = BTreeMap::new();
        for (m, p) in &all {
            let text = std::fs::read_to_string(p).unwrap();
            let shown = p.strip_prefix(root).unwrap().display();
            // The whole file, its tests too: a module whose tests outgrow
            // it puts them in a `tests.rs` of their own.
            let lines = text.lines().count();
            if lines > MAX_LINES {
                problems.push(format!("{shown} has {lines} lines (at most {MAX_LINES})"));
            }
            let code = code_of(&text);
            for e in string_errors(&code) {
                problems.push(format!("{shown}: `{e}`: give the error a type"));
            }
            codes.insert(m.clone(), code);
        }
        let krate = Crate::new(all, &codes);
        let graph: BTreeMap<Module, BTreeSet<Module>> = codes
            .iter()
            .map(|(m, code)| (m.clone(), krate.imports(m, code)))
            .collect();
        for c in circles(&graph) {
            let ties: Vec<String> = c
                .iter()
                .flat_map(|a| {
                    let to = graph[a].iter().filter(|b| c.contains(*b));
                    to.map(move |b| format!("{} -> {}", name(a), name(b)))
                })
                .collect();
            problems.push(format!("{dir}: an import circle: {}", ties.join(", ")));
        }
    }
    // The benches are programs of their own: held to the same length.
    let mut benches = BTreeMap::new();
    modules(&root.join("benches"), &[], &mut benches);
    for p in benches.values() {
        let lines = std::fs::read_to_string(p).unwrap().lines().count();
        if lines > MAX_LINES {
            let shown = p.strip_prefix(root).unwrap().display();
            problems.push(format!("{shown} has {lines} lines (at most {MAX_LINES})"));
        }
    }
    assert!(files > 150 && benches.len() > 5, "read {files} files");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// reqwest has no TLS provider of its own here (`rustls-no-provider`): a
/// client built before `net::tls` installs ring panics. So the runner's
/// code builds clients only through `net::tls::client_builder`, and a
/// library that builds its own (rmcp's streamable HTTP transport) is
/// called after `net::tls::install`.
#[test]
fn http_clients_are_built_with_the_tls_provider() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = BTreeMap::new();
    modules(&root.join("src"), &[], &mut all);
    let mut problems = Vec::new();
    let mut transports = 0;
    for p in all.values() {
        if p.ends_with("net/tls.rs") {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(p).unwrap());
        let shown = p.strip_prefix(root).unwrap().display().to_string();
        for direct in [
            "Client::builder(",
            "Client::new(",
            "Client::default(",
            "ClientBuilder::new(",
        ] {
            if code.contains(direct) {
                problems.push(format!("{shown}: `{direct}`: use net::tls::client_builder"));
            }
        }
        if code.contains("StreamableHttpClientTransport::from_config") {
            transports += 1;
            if !code.contains("tls::install()") {
                problems.push(format!(
                    "{shown}: rmcp builds a client: call net::tls::install first"
                ));
            }
        }
    }
    assert_eq!(transports, 1, "the remote MCP transport was not found");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The readers this test relies on, on the shapes the code uses.
#[test]
fn the_readers_see_imports_circles_and_string_errors() {
    let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Module>();
    let mut all = BTreeMap::new();
    for m in [&[][..], &["a"], &["a", "b"], &["a", "c"], &["d"]] {
        all.insert(v(m), PathBuf::new());
    }
    let code = code_of(
        "use super::c::{X, Y as Z};\npub use crate::d::{self, z};\nfn f() { crate::d::g(); b::h(); super::super::d::k() }\n// crate::x::y\nlet u = \"http://e\";",
    );
    let codes: BTreeMap<Module, String> = [
        (v(&["a", "b"]), code.clone()),
        (
            v(&["a"]),
            "pub use b::h;\nuse c::W;\nfn f() { b::h() }".into(),
        ),
        (v(&[]), "pub use a::c::Q;".into()),
    ]
    .into();
    let krate = Crate::new(all, &codes);
    assert_eq!(
        krate.imports(&v(&["a", "b"]), &code),
        [v(&["a", "c"]), v(&["d"])].into()
    );
    // A re-export is no use; a path through one names the file behind it.
    assert_eq!(
        krate.imports(&v(&["a"]), &codes[&v(&["a"])]),
        [v(&["a", "b"]), v(&["a", "c"])].into()
    );
    assert_eq!(
        krate.imports(&v(&["d"]), "fn f() -> crate::Q { crate::a::h() }"),
        [v(&["a", "c"]), v(&["a", "b"])].into()
    );
    let mut g = BTreeMap::new();
    g.insert(v(&["a"]), [v(&["d"])].into());
    g.insert(v(&["d"]), [v(&["a", "b"])].into());
    g.insert(v(&["a", "b"]), BTreeSet::new());
    assert!(circles(&g).is_empty());
    g.insert(v(&["a", "b"]), [v(&["a"])].into());
    assert_eq!(
        circles(&g),
        vec![[v(&["a"]), v(&["d"]), v(&["a", "b"])].into()]
    );
    assert_eq!(
        string_errors(
            "fn f() -> Result<Vec<(u8, String)>, String> {}\nfn g() -> Result<(), E> {}\nfn h() -> std::io::Result<String> {}"
        ),
        vec!["Result<Vec<(u8, String)>, String>"]
    );
}
