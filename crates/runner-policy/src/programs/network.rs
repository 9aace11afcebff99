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

/// The most `--output-dir`s one `curl` command is read with (one per URL
/// group, `--next`).
const MAX_OUTPUT_DIRS: usize = 8;

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
    // Each output joins each folder: bounded, as a command of many of
    // both would name their product (a few hundred of each fit in a
    // command).
    if output_dirs.len() > MAX_OUTPUT_DIRS {
        out.opaque(format!(
            "`curl --output-dir` given more than {MAX_OUTPUT_DIRS} times"
        ));
        return out;
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
            "--use-askpass" => out.starts("`wget --use-askpass` runs a command"),
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
                        out.starts(format!("`{program} {name}` runs a command"))
                    }
                    "-o" if v.to_ascii_lowercase().contains("proxycommand")
                        || v.to_ascii_lowercase().contains("localcommand") =>
                    {
                        out.starts(format!("`{program} -o {v}` runs a command"))
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
mod tests;
