//! Compilers and servers whose options name the files or folders they
//! write: `cc -o FILE`, `rustc -o FILE` / `--out-dir DIR`, `go build -o`,
//! `javac -d DIR`, `tsc --outDir DIR`, `redis-server --dir DIR`. Their
//! inputs are read. What they run (a compiler runs its own passes, a
//! server runs nothing of the workspace) is the program's rule's.

use super::spec::{FileOperands, Spec, Writes, writer};

/// C and C++ compilers: `-o FILE` writes; `-MF FILE` writes dependency
/// files; sources are read.
pub(super) const CC: Spec = Spec {
    write_opts: &["-o", "-MF", "-MT"],
    ..writer(
        &["cc", "gcc", "g++", "c++", "clang", "clang++", "tcc"],
        0,
        Writes::None,
        "oIDULxlMFT",
        &[],
    )
};

/// `rustc SRC -o FILE`, `--out-dir DIR` (everything beneath).
pub(super) const RUSTC: Spec = Spec {
    write_opts: &["-o"],
    tree_write_opts: &["--out-dir"],
    ..writer(
        &["rustc"],
        0,
        Writes::None,
        "oLlC",
        &[
            "--out-dir",
            "--crate-name",
            "--edition",
            "--crate-type",
            "--emit",
            "--target",
            "--cfg",
            "--cap-lints",
            "--explain",
            "--print",
            "--sysroot",
            "--extern",
        ],
    )
};

/// `javac -d DIR`, `-s DIR`, `-h DIR` write beneath their folders.
pub(super) const JAVAC: Spec = Spec {
    tree_write_opts: &["-d", "-s", "-h"],
    ..writer(
        &["javac"],
        0,
        Writes::None,
        "dsh",
        &[
            "-cp",
            "-classpath",
            "--class-path",
            "-sourcepath",
            "--release",
            "-encoding",
            "-source",
            "-target",
        ],
    )
};

/// `tsc --outDir DIR` writes beneath DIR, `--outFile FILE` writes FILE.
pub(super) const TSC: Spec = Spec {
    write_opts: &["--outFile", "--out"],
    tree_write_opts: &["--outDir", "--declarationDir"],
    ..writer(
        &["tsc"],
        0,
        Writes::None,
        "p",
        &[
            "--outDir",
            "--outFile",
            "--out",
            "--declarationDir",
            "--project",
            "--target",
            "--module",
            "--lib",
        ],
    )
};

/// `go build -o OUT`: a file, or a folder when it ends with `/`.
pub(super) fn go(args: &[String]) -> FileOperands {
    let mut out = FileOperands::default();
    let sub = args.first().map(String::as_str);
    if matches!(sub, Some("build" | "test" | "install")) {
        for (i, a) in args.iter().enumerate() {
            let value = match a.as_str() {
                "-o" => args.get(i + 1).cloned(),
                _ => a.strip_prefix("-o=").map(str::to_string),
            };
            if let Some(v) = value {
                out.tree_writes.push(v);
            }
        }
    }
    out
}

/// `redis-server [CONFIG] [--dir DIR] [--dbfilename F] [--logfile F]`:
/// the data folder is written beneath, the log file written, a config
/// file read (and it may name any folder: fail closed).
pub(super) fn redis_server(args: &[String]) -> FileOperands {
    let mut out = FileOperands::default();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "--dir" => out.tree_writes.extend(args.get(i + 1).cloned()),
            "--logfile" | "--pidfile" | "--unixsocket" => {
                out.writes.extend(args.get(i + 1).cloned())
            }
            "--dbfilename" | "--appendfilename" => {
                // Relative to the data folder, which `--dir` names.
                out.writes.extend(args.get(i + 1).cloned());
            }
            "--loadmodule" => out.opaque("`redis-server --loadmodule` loads a program"),
            _ if !a.starts_with("--") && i == 0 => {
                out.opaque("`redis-server CONFIG` reads settings that may name any folder");
            }
            _ => {
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    if !args.iter().any(|a| a == "--dir") {
        // Without `--dir`, it writes its dump in the folder it runs in.
        out.tree_writes.push(".".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::ops;

    #[test]
    fn compilers_and_servers_write_what_they_name() {
        assert_eq!(ops("cc -O2 -o out/a src/a.c"), "read src/a.c; write out/a");
        assert_eq!(
            ops("gcc -c src/a.c -o.github/x"),
            "read src/a.c; write .github/x"
        );
        assert_eq!(
            ops("clang++ -Iinclude src/a.cc -o out/a"),
            "read src/a.cc; write out/a"
        );
        assert_eq!(
            ops("rustc src/main.rs --out-dir out"),
            "read src/main.rs; tree-write out"
        );
        assert_eq!(
            ops("javac -d out src/A.java"),
            "read src/A.java; tree-write out"
        );
        assert_eq!(ops("tsc --outDir dist -p ."), "tree-write dist");
        assert_eq!(ops("go build -o bin/app ./cmd/app"), "tree-write bin/app");
        assert_eq!(
            ops("redis-server --dir .github --port 1"),
            "tree-write .github"
        );
        assert_eq!(ops("redis-server --port 1"), "tree-write .");
        assert_eq!(
            ops("rustc src/main.rs -o out/m"),
            "read src/main.rs; write out/m"
        );
        assert_eq!(
            ops("tsc --outFile out/all.js src/a.ts"),
            "read src/a.ts; write out/all.js"
        );
        assert_eq!(
            ops("redis-server --dir d --logfile .github/log --pidfile p --port 1"),
            "write .github/log p; tree-write d"
        );
        assert_eq!(
            ops("redis-server --dir d --dbfilename .env --appendfilename a --port 1"),
            "write .env a; tree-write d"
        );
        assert_eq!(
            ops("redis-server redis.conf --port 1"),
            "opaque: `redis-server CONFIG` reads settings that may name any folder"
        );
        assert_eq!(ops("redis-server --port 1 x"), "tree-write .");
        assert!(ops("redis-server --loadmodule ./x.so").starts_with("opaque"));
    }
}
