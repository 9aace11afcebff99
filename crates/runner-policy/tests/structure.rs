//! What the engine keeps out as it grows: none of the runner's heavy
//! dependencies (async runtime, HTTP, MCP, command line) among its own.
//! The shape of its files (none over 500 lines, no import circle, no
//! `Result<_, String>`) is held for the whole workspace by the root's
//! tests/structure.rs.

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
