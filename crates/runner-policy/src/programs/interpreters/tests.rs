use super::super::tests::ops;

#[test]
fn code_scripts_and_build_tools() {
    assert!(ops("deno eval console.log(1)").starts_with("opaque"));
    assert!(ops("deno run https://x.example/a.ts").starts_with("opaque"));
    assert_eq!(ops("deno run --allow-read tools/a.ts"), "read tools/a.ts");
    assert!(ops("nu -c ls").starts_with("opaque"));
    assert!(ops("pwsh -Command Get-ChildItem").starts_with("opaque"));
    assert_eq!(ops("pwsh -NoProfile -File tools/a.ps1"), "read tools/a.ps1");
    assert!(ops("julia -e 1").starts_with("opaque"));
    assert_eq!(ops("docker run -v $PWD:/src img"), "tree-write $PWD");
    assert_eq!(ops("docker run -v cache:/c img"), "");
    assert!(ops("python3 -c print(1)").starts_with("opaque"));
    assert!(ops("python3 -cprint(1)").starts_with("opaque"));
    assert!(ops("node -e x").starts_with("opaque"));
    assert!(ops("perl -e x").starts_with("opaque"));
    assert!(ops("ruby -e x").starts_with("opaque"));
    assert!(ops("perl -ne print f").starts_with("opaque"));
    assert_eq!(ops("python3 tools/gen.py --out x"), "read tools/gen.py");
    assert_eq!(ops("python3 -m pytest"), "");
    assert_eq!(ops("make -f build.mk all"), "read build.mk");
    assert!(ops("make --eval=x:").starts_with("opaque"));
    assert_eq!(ops("patch -p1 -i fix.diff"), "read fix.diff; tree-write .");
    assert_eq!(ops("patch --dry-run -p1 -i fix.diff"), "read fix.diff");
    assert_eq!(ops("patch f.c fix.diff"), "read fix.diff; write f.c");
    assert_eq!(ops("docker run -v /:/host alpine"), "tree-write /");
    assert_eq!(ops("docker run --volume=.:/w img"), "tree-write .");
    assert_eq!(ops("docker run -v cache:/c img"), "");
    assert!(ops("docker run --privileged img").starts_with("opaque"));
    assert!(ops("cargo --config target.x.runner=sh test").starts_with("opaque"));
    assert!(ops("go test -exec sh ./...").starts_with("opaque"));
    assert!(ops("npm test --script-shell=sh").starts_with("opaque"));
    assert_eq!(
        ops("cargo test --manifest-path sub/Cargo.toml"),
        "read sub/Cargo.toml"
    );
    assert_eq!(ops("cargo test"), "");
}

/// A row for each option the models read, so that misreading one
/// changes an answer.
#[test]
fn every_option_is_read() {
    // Inline code in every spelling.
    let inline =
        |p: &str, a: &str| format!("opaque: `{p} {a}` runs inline code the policy cannot see into");
    assert_eq!(ops("pwsh -e ZQBjAGgAbwA="), inline("pwsh", "-e"));
    assert_eq!(ops("pwsh /c dir"), inline("pwsh", "/c"));
    assert_eq!(
        ops("powershell -EncodedCommand x"),
        inline("powershell", "-EncodedCommand")
    );
    assert_eq!(ops("node -ip 1"), inline("node", "-ip"));
    assert_eq!(ops("bun -ip 1"), inline("bun", "-ip"));
    assert_eq!(ops("node -i app.js"), "read app.js");
    assert_eq!(ops("python3 -Bc x"), inline("python3", "-Bc"));
    assert_eq!(ops("php -nr x"), inline("php", "-nr"));
    assert_eq!(ops("php -n index.php"), "read index.php");
    assert_eq!(ops("python3 - x"), "read x");
    assert_eq!(ops("python3 -u tools/a.py"), "read tools/a.py");
    // deno's subcommand is its first word that is not an option.
    let deno = "opaque: `deno eval` (or its REPL) runs code the policy cannot see into";
    assert_eq!(ops("deno --quiet eval console.log(1)"), deno);
    assert_eq!(ops("deno"), deno);
    assert_eq!(ops("deno --quiet run a.ts"), "read a.ts");
    // make reads its makefiles in the folder `-C` names.
    assert_eq!(ops("make -C secret -f x.mk"), "read secret/x.mk");
    assert_eq!(ops("make -f x.mk -C a --directory=b all"), "read a/b/x.mk");
    assert_eq!(ops("make -C a -C /b -f x.mk"), "read /b/x.mk");
    assert_eq!(ops("make -C a -f /x.mk"), "read /x.mk");
    assert_eq!(ops("make -C a all"), "");
    // Build tools' options that name programs, and cargo's `--config`.
    assert_eq!(
        ops("cargo -Zhost-config test"),
        "opaque: `cargo -Zhost-config` names other programs to run"
    );
    assert_eq!(
        ops("cargo -Ztarget-applies-to-host test"),
        "opaque: `cargo -Ztarget-applies-to-host` names other programs to run"
    );
    assert_eq!(ops("cargo --config build.jobs=2 test"), "");
    assert_eq!(ops("cargo --config=build.jobs=2 test"), "");
    assert_eq!(
        ops("cargo --config=target.x.runner=sh test"),
        "opaque: `cargo --config` names other programs to run"
    );
    assert_eq!(
        ops("cargo test --manifest-path=sub/Cargo.toml"),
        "read sub/Cargo.toml"
    );
    // patch: what `-d`, `-o`, `-r` name, beneath `-d`'s folder.
    assert_eq!(
        ops("patch -d .github workflows/ci.yml fix.diff"),
        "read .github/fix.diff; write .github/workflows/ci.yml"
    );
    assert_eq!(
        ops("patch -d a -d b -p1 -i x.diff"),
        "read a/b/x.diff; tree-write a/b"
    );
    assert_eq!(
        ops("patch -d a -d /b -i x.diff"),
        "read /b/x.diff; tree-write /b"
    );
    assert_eq!(
        ops("patch -o out.c f.c fix.diff"),
        "read fix.diff f.c; write out.c"
    );
    assert_eq!(
        ops("patch --directory=d -o out.c f.c fix.diff"),
        "read d/fix.diff d/f.c; write d/out.c"
    );
    assert_eq!(
        ops("patch -r rej f.c fix.diff"),
        "read fix.diff; write rej f.c"
    );
    assert_eq!(ops("patch --dry-run -d d -r rej f.c"), "write d/rej");
    // docker's mounts in every spelling pflag reads.
    assert_eq!(ops("docker run -v=.github:/g img"), "tree-write .github");
    assert_eq!(ops("docker run -v.github:/g img"), "tree-write .github");
    assert_eq!(ops("docker run -itv ./src:/s img"), "tree-write ./src");
    assert_eq!(ops("docker run -itv=./src:/s img"), "tree-write ./src");
    assert_eq!(ops("docker run -ev ./src img"), "");
    assert_eq!(ops("docker run -vcache:/c img"), "");
    assert_eq!(
        ops("docker run --mount type=bind,src=./d,dst=/d img"),
        "tree-write ./d"
    );
    assert_eq!(
        ops("docker run --mount=type=bind,source=/x,target=/d img"),
        "tree-write /x"
    );
    for flag in [
        "--privileged",
        "--cap-add=ALL",
        "--device=/dev/sda",
        "--pid=host",
        "--security-opt=x",
    ] {
        let name = flag.split('=').next().unwrap();
        assert_eq!(
            ops(&format!("docker run {flag} img")),
            format!("opaque: `docker {name}` gives the container the host's powers")
        );
    }
}
