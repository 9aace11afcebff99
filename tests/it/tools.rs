//! The built-in tools on real files in temp folders.

use std::sync::Arc;

use runner::provider::{Vendor, declarations};
use runner::tools::{Registry, ToolContext, ToolError, ToolErrorKind, ToolOutput};
use runner::workspace::Workspace;
use serde_json::{Value, json};

struct Fixture {
    dir: tempfile::TempDir,
    _spill: tempfile::TempDir,
    ctx: Arc<ToolContext>,
    reg: Registry,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src/nested")).unwrap();
    std::fs::write(
        root.join("src/main.rs"),
        "fn main() {\n    println!(\"hi\");\n}\n",
    )
    .unwrap();
    std::fs::write(
        root.join("src/nested/lib.rs"),
        "pub fn helper() {}\n// TODO one\n",
    )
    .unwrap();
    std::fs::write(root.join("notes.txt"), "alpha\nbeta\ngamma\n").unwrap();
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    std::fs::create_dir_all(root.join("target")).unwrap();
    std::fs::write(
        root.join("target/out.rs"),
        "fn main() {}\n// TODO ignored\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".git/config"), "TODO in git\n").unwrap();
    std::fs::write(root.join("bin.dat"), b"\x00\x01\x02TODO").unwrap();
    let ws = Workspace::new(root).unwrap();
    let spill = tempfile::tempdir().unwrap();
    let ctx = Arc::new(ToolContext::new(ws).with_spill_dir(spill.path()));
    Fixture {
        dir,
        _spill: spill,
        ctx,
        reg: Registry::builtin(),
    }
}

async fn call(f: &Fixture, tool: &str, args: Value) -> Result<ToolOutput, ToolError> {
    let t = f.reg.get(tool).unwrap();
    let prepared = t.prepare(&args, &f.ctx)?;
    prepared.run(f.ctx.clone()).await
}

fn err_kind(r: Result<ToolOutput, ToolError>) -> (ToolErrorKind, String) {
    let e = r.expect_err("expected an error");
    (e.kind, e.message)
}

#[tokio::test]
async fn read_file_pages_and_errors() {
    let f = fixture();
    let out = call(&f, "read_file", json!({"file_path": "notes.txt"}))
        .await
        .unwrap();
    assert_eq!(out.content, "     1\talpha\n     2\tbeta\n     3\tgamma\n");
    let out = call(
        &f,
        "read_file",
        json!({"file_path": "notes.txt", "offset": 1, "limit": 1}),
    )
    .await
    .unwrap();
    assert!(out.content.starts_with("     2\tbeta\n"), "{}", out.content);
    assert!(
        out.content
            .contains("[1 more lines; continue with offset=2]")
    );
    let long = "x".repeat(5000);
    std::fs::write(f.dir.path().join("long.txt"), &long).unwrap();
    let out = call(&f, "read_file", json!({"file_path": "long.txt"}))
        .await
        .unwrap();
    assert!(out.content.contains("[line cut at 2000 characters]"));
    let (k, m) = err_kind(call(&f, "read_file", json!({"file_path": "missing.txt"})).await);
    assert_eq!(k, ToolErrorKind::Execution);
    assert!(m.contains("file not found"), "{m}");
    let (k, m) = err_kind(call(&f, "read_file", json!({"file_path": "src"})).await);
    assert_eq!(k, ToolErrorKind::Validation);
    assert!(m.contains("folder"), "{m}");
    let (k, m) = err_kind(call(&f, "read_file", json!({"file_path": "bin.dat"})).await);
    assert_eq!(k, ToolErrorKind::Validation);
    assert!(m.contains("binary"), "{m}");
    let (k, _) = err_kind(call(&f, "read_file", json!({"file_path": 5})).await);
    assert_eq!(k, ToolErrorKind::Validation);
    let (k, m) = err_kind(call(&f, "read_file", json!({"file_path": "a", "bogus": 1})).await);
    assert_eq!(k, ToolErrorKind::Validation);
    assert!(m.contains("bogus"), "{m}");
}

#[tokio::test]
async fn read_file_reads_past_its_first_read_and_cuts_at_characters() {
    let f = fixture();
    // Larger than the first read (8 KiB), no newline at the end.
    let text: String = (1..=3000).map(|i| format!("line {i}\n")).collect();
    let text = text.trim_end_matches('\n');
    std::fs::write(f.dir.path().join("big.txt"), text).unwrap();
    let out = call(
        &f,
        "read_file",
        json!({"file_path": "big.txt", "limit": 5000}),
    )
    .await
    .unwrap();
    assert_eq!(out.metadata["total_lines"], 3000);
    assert!(
        out.content.ends_with("  3000\tline 3000\n"),
        "{}",
        &out.content[out.content.len() - 40..]
    );
    // A cut counts characters, not bytes: 2000 two-byte characters stay.
    std::fs::write(f.dir.path().join("wide.txt"), "é".repeat(2001)).unwrap();
    let out = call(&f, "read_file", json!({"file_path": "wide.txt"}))
        .await
        .unwrap();
    let kept = format!("     1\t{}... [line cut", "é".repeat(2000));
    assert!(out.content.starts_with(&kept), "{}", &out.content[..40]);
    std::fs::write(f.dir.path().join("exact.txt"), "é".repeat(2000)).unwrap();
    let out = call(&f, "read_file", json!({"file_path": "exact.txt"}))
        .await
        .unwrap();
    assert!(!out.content.contains("cut"), "{}", &out.content[..40]);
}

#[test]
fn read_file_refuses_a_fifo_instead_of_waiting_for_a_writer() {
    let f = fixture();
    let fifo = f.dir.path().join("pipe");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string; mkfifo only creates a file.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    // On a thread of its own: a blocked open would hold any runtime it ran
    // on, so a timeout there could not fire.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let r = rt.block_on(call(&f, "read_file", json!({"file_path": "pipe"})));
        let _ = tx.send(r);
    });
    let r = rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("read_file waited on a FIFO");
    let (k, m) = err_kind(r);
    assert_eq!(k, ToolErrorKind::Validation);
    assert!(m.contains("not a regular file"), "{m}");
}

#[tokio::test]
async fn write_file_creates_overwrites_and_requires_a_read() {
    let f = fixture();
    let out = call(
        &f,
        "write_file",
        json!({"file_path": "new/deep/a.txt", "content": "one\n"}),
    )
    .await
    .unwrap();
    assert!(
        out.content.starts_with("Created new/deep/a.txt"),
        "{}",
        out.content
    );
    assert_eq!(out.metadata["action"], "created");
    assert!(out.metadata["diff"].as_str().unwrap().contains("+one"));
    // Written by this task: may be overwritten without a read.
    let out = call(
        &f,
        "write_file",
        json!({"file_path": "new/deep/a.txt", "content": "two\n"}),
    )
    .await
    .unwrap();
    assert_eq!(out.metadata["action"], "overwrote");
    assert!(
        out.metadata["diff"]
            .as_str()
            .unwrap()
            .contains("-one\n+two")
    );
    // An existing file never read: refused.
    let (k, m) = err_kind(
        call(
            &f,
            "write_file",
            json!({"file_path": "notes.txt", "content": "x"}),
        )
        .await,
    );
    assert_eq!(k, ToolErrorKind::Validation);
    assert!(m.contains("read it with read_file first"), "{m}");
    assert_eq!(
        std::fs::read_to_string(f.dir.path().join("notes.txt")).unwrap(),
        "alpha\nbeta\ngamma\n"
    );
    // Read, then changed behind our back: refused as stale.
    call(&f, "read_file", json!({"file_path": "notes.txt"}))
        .await
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(f.dir.path().join("notes.txt"), "changed by someone\n").unwrap();
    let (_, m) = err_kind(
        call(
            &f,
            "write_file",
            json!({"file_path": "notes.txt", "content": "x"}),
        )
        .await,
    );
    assert!(m.contains("changed since it was last read"), "{m}");
    let (k, _) = err_kind(
        call(
            &f,
            "write_file",
            json!({"file_path": "src", "content": "x"}),
        )
        .await,
    );
    assert_eq!(k, ToolErrorKind::Validation);
}

#[tokio::test]
async fn edit_file_modes_and_errors() {
    let f = fixture();
    let p = f.dir.path().join("e.txt");
    std::fs::write(&p, "a = 1\r\nb = 1\r\nc = 2").unwrap();
    let (_, m) = err_kind(
        call(
            &f,
            "edit_file",
            json!({"file_path": "e.txt", "old_string": "2", "new_string": "3"}),
        )
        .await,
    );
    assert!(m.contains("read_file"), "{m}");
    call(&f, "read_file", json!({"file_path": "e.txt"}))
        .await
        .unwrap();
    let (_, m) = err_kind(
        call(
            &f,
            "edit_file",
            json!({"file_path": "e.txt", "old_string": "= 1", "new_string": "= 5"}),
        )
        .await,
    );
    assert!(m.contains("occurs 2 times"), "{m}");
    let (_, m) = err_kind(
        call(
            &f,
            "edit_file",
            json!({"file_path": "e.txt", "old_string": "zzz", "new_string": "y"}),
        )
        .await,
    );
    assert!(m.contains("not found"), "{m}");
    let (k, m) = err_kind(
        call(
            &f,
            "edit_file",
            json!({"file_path": "e.txt", "old_string": "a", "new_string": "a"}),
        )
        .await,
    );
    assert_eq!(k, ToolErrorKind::Validation);
    assert!(m.contains("identical"), "{m}");
    let out = call(&f, "edit_file", json!({"file_path": "e.txt", "old_string": "= 1", "new_string": "= 5", "replace_all": true})).await.unwrap();
    assert_eq!(out.metadata["replacements"], 2);
    // CRLF line endings and the missing final newline are kept.
    let out = call(
        &f,
        "edit_file",
        json!({"file_path": "e.txt", "old_string": "a = 5\nb", "new_string": "a = 6\nb"}),
    )
    .await
    .unwrap();
    assert!(out.metadata["diff"].as_str().unwrap().contains("-a = 5"));
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        "a = 6\r\nb = 5\r\nc = 2"
    );
    // Regex with captures.
    call(&f, "edit_file", json!({"file_path": "e.txt", "old_string": "c = (\\d)", "new_string": "c = $1$1", "match": "regex"})).await.unwrap();
    assert!(std::fs::read_to_string(&p).unwrap().ends_with("c = 22"));
    // Flexible: indentation differs, still unique, and the result says so.
    std::fs::write(
        f.dir.path().join("py.py"),
        "def f():\n    if x:\n        return 1\n",
    )
    .unwrap();
    call(&f, "read_file", json!({"file_path": "py.py"}))
        .await
        .unwrap();
    let out = call(&f, "edit_file", json!({"file_path": "py.py", "old_string": "if x:\n    return 1", "new_string": "if x:\n    return 2", "match": "flexible"})).await.unwrap();
    assert!(out.content.contains("flexible"), "{}", out.content);
    assert_eq!(
        std::fs::read_to_string(f.dir.path().join("py.py")).unwrap(),
        "def f():\n    if x:\n        return 2\n"
    );
    let (_, m) = err_kind(
        call(
            &f,
            "edit_file",
            json!({"file_path": "nope.txt", "old_string": "a", "new_string": "b"}),
        )
        .await,
    );
    assert!(m.contains("not found"), "{m}");
}

#[tokio::test]
async fn ls_glob_grep() {
    let f = fixture();
    let out = call(&f, "ls", json!({})).await.unwrap();
    assert!(out.content.contains("dir   src/"), "{}", out.content);
    assert!(
        out.content.contains("file  notes.txt  (17 B)"),
        "{}",
        out.content
    );
    assert!(!out.content.contains(".git/"), "{}", out.content);
    assert!(!out.content.contains("target"), "{}", out.content);
    let (k, _) = err_kind(call(&f, "ls", json!({"path": "notes.txt"})).await);
    assert_eq!(k, ToolErrorKind::Validation);

    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(f.dir.path().join("src/newest.rs"), "fn x() {}\n").unwrap();
    let out = call(&f, "glob", json!({"pattern": "**/*.rs"}))
        .await
        .unwrap();
    let lines: Vec<&str> = out.content.lines().collect();
    assert_eq!(lines[0], "src/newest.rs", "newest first: {lines:?}");
    assert!(lines.contains(&"src/nested/lib.rs"));
    assert!(
        !lines.iter().any(|l| l.starts_with("target")),
        "ignored: {lines:?}"
    );
    let out = call(&f, "glob", json!({"pattern": "src/*.rs"}))
        .await
        .unwrap();
    assert!(
        !out.content.contains("nested"),
        "`*` stays in one folder: {}",
        out.content
    );
    let (k, _) = err_kind(call(&f, "glob", json!({"pattern": "src/[.rs"})).await);
    assert_eq!(k, ToolErrorKind::Validation);

    let out = call(&f, "grep", json!({"pattern": "TODO"})).await.unwrap();
    assert_eq!(out.content, "src/nested/lib.rs:2:// TODO one\n");
    let out = call(
        &f,
        "grep",
        json!({"pattern": "fn \\w+", "include": "*.rs", "path": "src"}),
    )
    .await
    .unwrap();
    assert!(
        out.content.contains("src/main.rs:1:fn main() {"),
        "{}",
        out.content
    );
    let out = call(
        &f,
        "grep",
        json!({"pattern": "a", "path": "notes.txt", "limit": 1}),
    )
    .await
    .unwrap();
    assert!(
        out.content.contains("[2 more matches left out"),
        "{}",
        out.content
    );
    let (k, m) = err_kind(call(&f, "grep", json!({"pattern": "(unclosed"})).await);
    assert_eq!(k, ToolErrorKind::Validation);
    assert!(m.contains("invalid regex"), "{m}");
}

#[tokio::test]
async fn bash_exit_codes_streams_timeout_and_cwd() {
    let f = fixture();
    let out = call(
        &f,
        "bash",
        json!({"command": "echo out; echo err >&2", "working_directory": "src"}),
    )
    .await
    .unwrap();
    assert!(
        out.content
            .contains("exit code 0\n--- stdout ---\nout\n--- stderr ---\nerr\n"),
        "{}",
        out.content
    );
    let out = call(&f, "bash", json!({"command": "pwd"})).await.unwrap();
    assert!(
        out.content
            .contains(&f.ctx.workspace.root().display().to_string())
    );
    let (k, m) = err_kind(call(&f, "bash", json!({"command": "echo no >&2; exit 4"})).await);
    assert_eq!(k, ToolErrorKind::Execution);
    assert!(m.contains("exit code 4") && m.contains("no"), "{m}");
    let (k, _) = err_kind(call(&f, "bash", json!({"command": "sleep 5", "timeout": 200})).await);
    assert_eq!(k, ToolErrorKind::Timeout);
    let (k, _) = err_kind(call(&f, "bash", json!({"command": "ls", "timeout": 700000})).await);
    assert_eq!(k, ToolErrorKind::Validation);
    // stdin is closed: `cat` ends at once.
    call(&f, "bash", json!({"command": "cat"})).await.unwrap();
}

#[tokio::test]
async fn save_memory_appends_under_its_section() {
    let f = fixture();
    std::fs::write(
        f.dir.path().join("CONTEXT.md"),
        "# Context\n\n## Agent Memories\n\n- old fact\n\n## Other\n",
    )
    .unwrap();
    call(&f, "save_memory", json!({"fact": "Tests need make db."}))
        .await
        .unwrap();
    let text = std::fs::read_to_string(f.dir.path().join("CONTEXT.md")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[4], "- old fact");
    assert!(
        lines[5].starts_with("- 20") && lines[5].ends_with(": Tests need make db."),
        "{text}"
    );
    assert_eq!(lines[7], "## Other");
    let (k, _) = err_kind(call(&f, "save_memory", json!({"fact": "  "})).await);
    assert_eq!(k, ToolErrorKind::Validation);
}

#[tokio::test]
async fn every_file_tool_refuses_escapes() {
    let f = fixture();
    std::os::unix::fs::symlink("/etc", f.dir.path().join("etc-link")).unwrap();
    for path in [
        "../x",
        "/etc/passwd",
        "etc-link",
        "etc-link/passwd",
        "src/../../x",
    ] {
        let cases = [
            ("read_file", json!({"file_path": path})),
            ("write_file", json!({"file_path": path, "content": "x"})),
            (
                "edit_file",
                json!({"file_path": path, "old_string": "a", "new_string": "b"}),
            ),
            ("ls", json!({"path": path})),
            ("glob", json!({"pattern": "*", "path": path})),
            ("grep", json!({"pattern": "x", "path": path})),
            ("bash", json!({"command": "ls", "working_directory": path})),
        ];
        for (tool, args) in cases {
            let (k, m) = err_kind(call(&f, tool, args).await);
            assert_eq!(k, ToolErrorKind::Permission, "{tool} {path}: {m}");
        }
    }
}

#[tokio::test]
async fn large_results_spill_to_a_file_except_read_file() {
    let f = fixture();
    let reg = &f.reg;
    let t = reg.get("bash").unwrap();
    let mut out = call(&f, "bash", json!({"command": "seq 1 20000"}))
        .await
        .unwrap();
    runner::tools::spill_if_large(
        &mut out,
        t.max_result_chars(),
        f.ctx.spill_dir.as_deref(),
        "bash",
        1,
    )
    .unwrap();
    let path = out.metadata["spilled_to"].as_str().unwrap().to_string();
    assert!(
        out.content.contains(&path) && out.content.contains("read_file"),
        "{}",
        out.content
    );
    assert!(out.content.len() < 5000);
    // The spilled file is readable with read_file, which never spills.
    assert_eq!(reg.get("read_file").unwrap().max_result_chars(), None);
    let page = call(
        &f,
        "read_file",
        json!({"file_path": path, "offset": 100, "limit": 2}),
    )
    .await
    .unwrap();
    assert!(page.content.starts_with("   101\t"), "{}", page.content);
    // Only the spill folder is exempt: a sibling path is not.
    let sibling = f.ctx.spill_dir.as_ref().unwrap().join("../elsewhere.txt");
    let (k, _) = err_kind(call(&f, "read_file", json!({"file_path": sibling})).await);
    assert_eq!(k, ToolErrorKind::Permission);
}

#[test]
fn declarations_in_three_dialects() {
    let reg = Registry::builtin();
    let names: Vec<&str> = reg.names().collect();
    for n in [
        "read_file",
        "write_file",
        "edit_file",
        "ls",
        "glob",
        "grep",
        "bash",
        "save_memory",
    ] {
        assert!(names.contains(&n), "{n} missing");
    }
    // The test-only tool is there exactly when its feature is.
    assert_eq!(names.contains(&"probe"), cfg!(feature = "test-tools"));
    let openai = declarations(Vendor::OpenAi, &reg.specs());
    for d in openai.as_array().unwrap() {
        assert_eq!(d["type"], "function");
        let p = &d["function"]["parameters"];
        assert_eq!(p["type"], "object");
        assert!(p["properties"].is_object());
        assert_eq!(p["additionalProperties"], false);
        assert!(d["function"]["description"].as_str().unwrap().len() > 20);
    }
    let anthropic = declarations(Vendor::Anthropic, &reg.specs());
    for d in anthropic.as_array().unwrap() {
        assert_eq!(d["input_schema"]["type"], "object");
    }
    let gemini = serde_json::to_string(&declarations(Vendor::Gemini, &reg.specs())).unwrap();
    for bad in ["$ref", "$schema", "$defs", "additionalProperties"] {
        assert!(!gemini.contains(bad), "gemini declarations contain {bad}");
    }
    let read = reg.get("read_file").unwrap().description();
    assert!(
        read.contains("Usage notes:") && read.contains("Examples:") && read.contains("IMPORTANT:")
    );
}

#[test]
fn registry_rejects_duplicates_and_filters_plan_mode() {
    let mut reg = Registry::builtin();
    let dup = runner::tools::builtin::all().remove(0);
    assert!(reg.register(dup).is_err());
    let plan: Vec<String> = reg.read_only().names().map(String::from).collect();
    assert!(
        plan.contains(&"grep".to_string())
            && !plan.contains(&"bash".to_string())
            && !plan.contains(&"edit_file".to_string())
    );
    // An unknown name narrows, never widens: only read_file is left.
    reg.retain_named(&["read_file".to_string(), "nope".to_string()]);
    assert_eq!(reg.names().collect::<Vec<_>>(), ["read_file"]);
}
