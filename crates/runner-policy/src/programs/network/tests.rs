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
    let dirs = |n: usize| {
        (0..n)
            .map(|k| format!(" --output-dir d{k} -o f -:"))
            .collect::<String>()
    };
    assert!(!ops(&format!("curl{}", dirs(8))).starts_with("opaque"));
    assert_eq!(
        ops(&format!("curl{}", dirs(9))),
        "opaque: `curl --output-dir` given more than 8 times"
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
