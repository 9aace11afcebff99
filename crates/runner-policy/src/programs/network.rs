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
            "--trace",
            "--trace-ascii",
            "--stderr",
            "--json",
            "--url",
            "--output-dir",
            "--connect-timeout",
            "--retry",
            "--limit-rate",
            "--resolve",
        ],
        optional: &[],
    };
    let mut out = FileOperands::default();
    let mut output_dir = None;
    for arg in opts.parse(args) {
        let Arg::Opt { name, value } = arg else {
            continue;
        };
        let value = value.unwrap_or_default().to_string();
        match name.as_str() {
            "-o" | "--output" | "-D" | "--dump-header" | "-c" | "--cookie-jar" | "--trace"
            | "--trace-ascii" | "--stderr" => out.writes.push(value),
            "-O" | "--remote-name" | "--remote-name-all" | "-J" => out
                .tree_writes
                .push(output_dir.clone().unwrap_or_else(|| ".".into())),
            "--output-dir" => output_dir = Some(value),
            "-T" | "--upload-file" | "--cert" | "--key" | "--cacert" => out.reads.push(value),
            "-d" | "--data" | "--data-binary" | "--data-ascii" | "--data-urlencode" | "--json" => {
                // `@FILE`, or `name@FILE` for --data-urlencode.
                if let Some((_, f)) = value.split_once('@') {
                    out.reads.push(f.to_string());
                }
            }
            "-F" | "--form" => {
                if let Some((_, v)) = value.split_once('=')
                    && let Some(f) = v.strip_prefix('@').or_else(|| v.strip_prefix('<'))
                {
                    out.reads.push(f.split(';').next().unwrap_or(f).to_string());
                }
            }
            "-b" | "--cookie" if !value.contains('=') => out.reads.push(value),
            "-K" | "--config" => out.opaque("`curl -K` reads more options from a file"),
            _ => {}
        }
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
/// options that run a local command fail closed.
pub(super) fn ssh(args: &[String]) -> FileOperands {
    let mut out = FileOperands::default();
    for (i, a) in args.iter().enumerate() {
        let opt = if a == "-o" {
            args.get(i + 1).map(String::as_str)
        } else {
            a.strip_prefix("-o")
        };
        if let Some(o) = opt {
            let o = o.to_ascii_lowercase();
            if o.contains("proxycommand")
                || o.contains("localcommand")
                || o.contains("knownhostscommand")
            {
                out.opaque("`ssh -o ...Command=` runs a local command");
            }
        }
        if a == "-F" {
            out.opaque("`ssh -F` reads a config that can run commands");
        }
        if a == "-i" {
            out.reads.extend(args.get(i + 1).cloned());
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
}
