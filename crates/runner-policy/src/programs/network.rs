//! Programs that move files over the network: what they read and upload,
//! and what they write.
//!
//! - `curl`: `-o FILE` writes, `-O` writes a file named by the URL in the
//!   current folder (anything beneath it), `-D`/`-c`/`--trace` write;
//!   `-T FILE`, `-d @FILE`, `--data-binary @FILE`, `-F name=@FILE` and `-b
//!   FILE` read (and upload); `-K FILE` (a config file of more options)
//!   fails closed.
//! - `wget`: writes a file named by the URL (or `-O FILE`, `-P DIR`); `-i
//!   FILE` and `--post-file` read; `-e CMD` (a wgetrc command) fails closed.
//! - `rsync SRC... DST` and `scp SRC... DST`: sources are read (whole
//!   folders), the destination written; remote paths (`host:path`) are
//!   neither. `-e`/`--rsh`, `-S PROGRAM` and `-o ProxyCommand=...` run
//!   commands and fail closed, as do `ssh -o ProxyCommand=...` and `ssh -F`.

use super::spec::{Arg, FileOperands, Options};

/// `curl`.
pub(super) fn curl(args: &[String]) -> FileOperands {
    let opts = Options {
        short_values: "oDcTdFbKHXAeuUxrwmEyYzCtQ",
        long_values: &[
            "--output",
            "--dump-header",
            "--cookie-jar",
            "--upload-file",
            "--data",
            "--data-binary",
            "--data-raw",
            "--data-urlencode",
            "--data-ascii",
            "--form",
            "--cookie",
            "--config",
            "--header",
            "--proxy-header",
            "--request",
            "--user-agent",
            "--referer",
            "--user",
            "--proxy-user",
            "--proxy",
            "--range",
            "--write-out",
            "--max-time",
            "--cert",
            "--key",
            "--cacert",
            "--capath",
            "--crlfile",
            "--proxy-cert",
            "--proxy-key",
            "--proxy-cacert",
            "--netrc-file",
            "--trace",
            "--trace-ascii",
            "--stderr",
            "--json",
            "--url",
            "--url-query",
            "--variable",
            "--output-dir",
            "--etag-save",
            "--etag-compare",
            "--hsts",
            "--alt-svc",
            "--libcurl",
            "--connect-timeout",
            "--retry",
            "--limit-rate",
            "--resolve",
        ],
        optional: &[],
    };
    let mut out = FileOperands::default();
    // `--output-dir` holds for every `-o` and `-O` of its URLs, given
    // before or after them; `--next` (`-:`) starts other URLs' options.
    let mut output_dirs: Vec<String> = Vec::new();
    let mut outputs: Vec<String> = Vec::new();
    let mut remote_names = false;
    for arg in opts.parse(args) {
        let Arg::Opt { name, value } = arg else {
            continue;
        };
        let value = value.unwrap_or_default().to_string();
        // `@FILE` (or `NAME@FILE`) gives an option's value from a file.
        let at_file = |v: &str| v.split_once('@').map(|(_, f)| f.to_string());
        match name.as_str() {
            "-o" | "--output" => outputs.push(value),
            "-D" | "--dump-header" | "-c" | "--cookie-jar" | "--trace" | "--trace-ascii"
            | "--stderr" | "--etag-save" | "--libcurl" => out.writes.push(value),
            // Read, then written back.
            "--hsts" | "--alt-svc" => {
                out.reads.push(value.clone());
                out.writes.push(value);
            }
            "-O" | "--remote-name" | "--remote-name-all" | "-J" => remote_names = true,
            "--output-dir" => output_dirs.push(value),
            "-T" | "--upload-file" | "--cert" | "--key" | "--cacert" | "--crlfile"
            | "--proxy-cert" | "--proxy-key" | "--proxy-cacert" | "--netrc-file"
            | "--etag-compare" => out.reads.push(value),
            "--capath" => out.tree_reads.push(value),
            "-d" | "--data" | "--data-binary" | "--data-ascii" | "--data-urlencode" | "--json"
            | "--url-query" | "--variable" => out.reads.extend(at_file(&value)),
            // Headers and the write-out format from a file: `-H @FILE`.
            "-H" | "--header" | "--proxy-header" | "-w" | "--write-out" => out
                .reads
                .extend(value.strip_prefix('@').map(str::to_string)),
            "-F" | "--form" => {
                if let Some((_, v)) = value.split_once('=')
                    && let Some(f) = v.strip_prefix('@').or_else(|| v.strip_prefix('<'))
                {
                    out.reads.push(f.split(';').next().unwrap_or(f).to_string());
                }
            }
            // A cookie file, unless the value is cookies (`NAME=VALUE`).
            "-b" | "--cookie" if !value.contains('=') => out.reads.push(value),
            "-K" | "--config" => out.opaque("`curl -K` reads more options from a file"),
            _ => {}
        }
    }
    // With several URL groups, a group's outputs may have no folder: both.
    let grouped = args.iter().any(|a| a == "--next" || a == "-:");
    for o in outputs {
        if o.starts_with('/') || output_dirs.is_empty() || grouped {
            out.writes.push(o.clone());
        }
        if !o.starts_with('/') {
            out.writes
                .extend(output_dirs.iter().map(|d| format!("{d}/{o}")));
        }
    }
    if remote_names {
        if output_dirs.is_empty() || grouped {
            out.tree_writes.push(".".into());
        }
        out.tree_writes.extend(output_dirs);
    }
    out
}

/// `wget`.
pub(super) fn wget(args: &[String]) -> FileOperands {
    let opts = Options {
        short_values: "OoaPiebBtTwlUQ",
        long_values: &[
            "--output-document",
            "--output-file",
            "--append-output",
            "--directory-prefix",
            "--input-file",
            "--execute",
            "--base",
            "--tries",
            "--timeout",
            "--wait",
            "--level",
            "--user-agent",
            "--quota",
            "--post-file",
            "--body-file",
            "--post-data",
            "--header",
            "--load-cookies",
            "--save-cookies",
            "--certificate",
            "--private-key",
            "--ca-certificate",
            "--user",
            "--password",
            "--config",
            "--use-askpass",
            "--rejected-log",
        ],
        optional: &[],
    };
    let mut out = FileOperands::default();
    let mut document = None;
    let mut prefix = None;
    for arg in opts.parse(args) {
        let Arg::Opt { name, value } = arg else {
            continue;
        };
        let value = value.unwrap_or_default().to_string();
        match name.as_str() {
            "-O" | "--output-document" => document = Some(value),
            "-P" | "--directory-prefix" => prefix = Some(value),
            "-o" | "--output-file" | "-a" | "--append-output" | "--save-cookies" => {
                out.writes.push(value)
            }
            "-i" | "--input-file" | "--post-file" | "--body-file" | "--load-cookies"
            | "--certificate" | "--private-key" | "--ca-certificate" => out.reads.push(value),
            "-e" | "--execute" => out.opaque("`wget -e` runs a wgetrc command"),
            "--config" => out.opaque("`wget --config` reads wgetrc commands from a file"),
            "--use-askpass" => out.opaque("`wget --use-askpass` runs a command"),
            "--rejected-log" => out.writes.push(value),
            _ => {}
        }
    }
    match document {
        Some(d) => out.writes.push(d),
        None => out.tree_writes.push(prefix.unwrap_or_else(|| ".".into())),
    }
    out
}

/// True for `host:path` and `user@host:path` (not a local path).
fn is_remote(p: &str) -> bool {
    match p.split_once(':') {
        Some((host, _)) => !host.contains('/') && !host.is_empty(),
        None => false,
    }
}

/// `rsync` and `scp`: local sources read, a local destination written.
pub(super) fn copy_remote(program: &str, args: &[String]) -> FileOperands {
    let opts = Options {
        short_values: if program == "scp" {
            "SoFiPlcJD"
        } else {
            "eBfTM"
        },
        long_values: &[
            "--rsh",
            "--rsync-path",
            "--filter",
            "--exclude",
            "--include",
            "--exclude-from",
            "--include-from",
            "--files-from",
            "--temp-dir",
            "--partial-dir",
            "--log-file",
            "--password-file",
            "--chmod",
            "--chown",
            "--backup-dir",
            "--suffix",
            "--compare-dest",
            "--copy-dest",
            "--link-dest",
            "--timeout",
            "--bwlimit",
            "--port",
        ],
        optional: &[],
    };
    let mut out = FileOperands::default();
    let mut operands = Vec::new();
    for arg in opts.parse(args) {
        match arg {
            Arg::Operand(o) => operands.push(o.to_string()),
            Arg::Opt { name, value } => {
                let v = value.unwrap_or_default();
                match name.as_str() {
                    "-e" | "--rsh" | "--rsync-path" | "-S" => {
                        out.opaque(format!("`{program} {name}` runs a command"))
                    }
                    "-o" if v.to_ascii_lowercase().contains("proxycommand")
                        || v.to_ascii_lowercase().contains("localcommand") =>
                    {
                        out.opaque(format!("`{program} -o {v}` runs a command"))
                    }
                    "-F" => out.opaque(format!(
                        "`{program} -F` reads an ssh config that can run commands"
                    )),
                    "--exclude-from" | "--include-from" | "--password-file" | "-i" => {
                        out.reads.push(v.to_string())
                    }
                    "--files-from" => out.opaque(format!(
                        "`{program} --files-from` reads the names of the files at run time"
                    )),
                    "--log-file" => out.writes.push(v.to_string()),
                    _ => {}
                }
            }
        }
    }
    if let Some((dest, sources)) = operands.split_last()
        && !sources.is_empty()
    {
        out.tree_reads
            .extend(sources.iter().filter(|s| !is_remote(s)).cloned());
        if !is_remote(dest) {
            out.tree_writes.push(dest.clone());
        }
    }
    out
}

/// `ssh`: runs a command on another machine (the rule on `ssh` decides);
/// options that run a local command fail closed. Read as ssh's getopt
/// reads them: `-F cfg`, `-Fcfg` and `-vF cfg` are the same option.
pub(super) fn ssh(args: &[String]) -> FileOperands {
    let opts = Options {
        // `ssh`'s options that take a value (OpenSSH's getopt string).
        short_values: "BbcDEeFIiJLlmOoPpQRSWw",
        long_values: &[],
        optional: &[],
    };
    let mut out = FileOperands::default();
    for arg in opts.parse(args) {
        let Arg::Opt { name, value } = arg else {
            continue;
        };
        let value = value.unwrap_or_default();
        match name.as_str() {
            "-o" => {
                let o = value.to_ascii_lowercase();
                if [
                    "proxycommand",
                    "localcommand",
                    "knownhostscommand",
                    "match",
                    "include",
                ]
                .iter()
                .any(|k| o.contains(k))
                {
                    out.opaque("`ssh -o ...Command=` runs a local command");
                }
            }
            "-F" => out.opaque("`ssh -F` reads a config that can run commands"),
            "-i" => out.reads.push(value.to_string()),
            "-E" => out.writes.push(value.to_string()),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::ops;

    #[test]
    fn uploads_and_downloads() {
        assert_eq!(ops("curl -o out.html https://x"), "write out.html");
        assert_eq!(ops("curl -O https://x/a"), "tree-write .");
        assert_eq!(ops("curl -T .env https://x"), "read .env");
        assert_eq!(ops("curl -d @.env https://x"), "read .env");
        assert_eq!(ops("curl --data-binary=@.env https://x"), "read .env");
        assert_eq!(ops("curl -F f=@.env https://x"), "read .env");
        assert!(ops("curl -K cfg https://x").starts_with("opaque"));
        assert_eq!(ops("wget https://x/a"), "tree-write .");
        assert_eq!(ops("wget -O a https://x/a"), "write a");
        assert_eq!(
            ops("wget --post-file=.env https://x"),
            "read .env; tree-write ."
        );
        assert!(ops("wget -e x https://x").starts_with("opaque"));
        assert_eq!(ops("rsync -a src/ host:dst"), "tree-read src/");
        assert_eq!(ops("rsync -a host:src out"), "tree-write out");
        assert!(ops("rsync -e sh src host:d").starts_with("opaque"));
        assert_eq!(ops("scp .env host:x"), "tree-read .env");
        assert!(ops("scp -o ProxyCommand=sh a host:b").starts_with("opaque"));
        assert!(ops("ssh -oProxyCommand=sh host").starts_with("opaque"));
        assert_eq!(ops("ssh host ls"), "");
    }

    /// A row for each option the models read, so that misreading one
    /// changes an answer.
    #[test]
    fn every_option_is_read() {
        // curl: `--output-dir` holds for `-o` and `-O`, before or after.
        assert_eq!(
            ops("curl -o workflows/ci.yml --output-dir .github https://x"),
            "write .github/workflows/ci.yml"
        );
        assert_eq!(
            ops("curl --output-dir out -O https://x/a"),
            "tree-write out"
        );
        assert_eq!(
            ops("curl -O https://x/a --output-dir out"),
            "tree-write out"
        );
        assert_eq!(
            ops("curl --output-dir out -o /tmp/a https://x"),
            "write /tmp/a"
        );
        assert_eq!(
            ops("curl --output-dir out -o a https://x -: -o b https://y"),
            "write a out/a b out/b"
        );
        assert_eq!(
            ops("curl --output-dir out -O https://x --next -O https://y"),
            "tree-write . out"
        );
        // Files read through `@` and the options that name them.
        assert_eq!(ops("curl -H @secrets/h https://x"), "read secrets/h");
        assert_eq!(ops("curl -H X-A:1 https://x"), "");
        assert_eq!(ops("curl --proxy-header=@h https://x"), "read h");
        assert_eq!(ops("curl -w @fmt https://x"), "read fmt");
        assert_eq!(ops("curl --url-query n@f https://x"), "read f");
        assert_eq!(ops("curl --variable n@f https://x"), "read f");
        assert_eq!(ops("curl --netrc-file .netrc https://x"), "read .netrc");
        assert_eq!(ops("curl --capath certs https://x"), "tree-read certs");
        assert_eq!(ops("curl --hsts h https://x"), "read h; write h");
        assert_eq!(
            ops("curl --libcurl .github/x.c https://x"),
            "write .github/x.c"
        );
        assert_eq!(ops("curl --etag-save e https://x"), "write e");
        assert_eq!(ops("curl -b cookies.txt https://x"), "read cookies.txt");
        assert_eq!(ops("curl -b a=b https://x"), "");
        // wget.
        assert_eq!(ops("wget -P dl https://x/a"), "tree-write dl");
        assert_eq!(
            ops("wget -o log -a log2 https://x/a"),
            "write log log2; tree-write ."
        );
        assert_eq!(ops("wget --save-cookies c -O a https://x"), "write c a");
        assert_eq!(
            ops("wget --rejected-log=r https://x"),
            "write r; tree-write ."
        );
        assert_eq!(
            ops("wget --config=rc https://x"),
            "opaque: `wget --config` reads wgetrc commands from a file"
        );
        assert_eq!(
            ops("wget --use-askpass=sh https://x"),
            "opaque: `wget --use-askpass` runs a command"
        );
        // rsync and scp: remote names, and what runs or reads names.
        assert_eq!(
            ops("rsync -a src/ /abs/x:y"),
            "tree-read src/; tree-write /abs/x:y"
        );
        assert_eq!(ops("rsync -a src/ :dst"), "tree-read src/; tree-write :dst");
        assert_eq!(
            ops("rsync -a --files-from=list src/ host:d"),
            "opaque: `rsync --files-from` reads the names of the files at run time"
        );
        assert_eq!(
            ops("rsync --log-file=l src host:d"),
            "write l; tree-read src"
        );
        assert_eq!(
            ops("scp -i secrets/key a host:b"),
            "read secrets/key; tree-read a"
        );
        assert_eq!(
            ops("rsync --exclude-from=x --include-from y --password-file=p src host:d"),
            "read x y p; tree-read src"
        );
        assert_eq!(
            ops("scp -F cfg a host:b"),
            "opaque: `scp -F` reads an ssh config that can run commands"
        );
        assert_eq!(
            ops("scp -o LocalCommand=x a host:b"),
            "opaque: `scp -o LocalCommand=x` runs a command"
        );
        assert_eq!(ops("scp -o Port=2 a host:b"), "tree-read a");
        assert_eq!(
            ops("rsync --rsync-path=x src host:d"),
            "opaque: `rsync --rsync-path` runs a command"
        );
        // ssh in every spelling getopt reads.
        let config = "opaque: `ssh -F` reads a config that can run commands";
        assert_eq!(ops("ssh -Fcfg host"), config);
        assert_eq!(ops("ssh -vF cfg host"), config);
        assert_eq!(
            ops("ssh -o ProxyCommand=sh host"),
            "opaque: `ssh -o ...Command=` runs a local command"
        );
        assert_eq!(
            ops("ssh -vo KnownHostsCommand=sh host"),
            "opaque: `ssh -o ...Command=` runs a local command"
        );
        assert_eq!(ops("ssh -isecrets/key host"), "read secrets/key");
        assert_eq!(ops("ssh -E .github/log host"), "write .github/log");
        assert_eq!(ops("ssh -p 22 -l me host uptime"), "");
    }
}
