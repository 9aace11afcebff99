use super::super::tests::ops;

#[test]
fn reads_writes_and_runs() {
    assert_eq!(ops("git diff HEAD -- src"), "read src; history src");
    assert_eq!(ops("git status"), "");
    assert_eq!(ops("git show HEAD:.env"), "read .env");
    assert_eq!(ops("git show HEAD~1:./src/a.rs"), "read src/a.rs");
    assert_eq!(ops("git log -p -- .env"), "read .env; history .env");
    assert_eq!(ops("git log -n 3 --format=%H -- src"), "read src");
    assert_eq!(ops("git diff --no-index a b"), "tree-read a b");
    assert_eq!(ops("git blame .env"), "read .env");
    assert_eq!(ops("git blame -L 1,2 HEAD -- .env"), "read .env");
    assert_eq!(ops("git grep TODO"), "tree-read .");
    assert_eq!(ops("git grep TODO -- src"), "tree-read src");
    assert_eq!(ops("git cat-file -p HEAD:.env"), "read .env");
    assert_eq!(ops("git cat-file -p 1234abcd"), "history .");
    assert_eq!(ops("git cat-file --batch"), "history .");
    assert_eq!(ops("git diff --output=o"), "write o");
    assert_eq!(ops("git log --output o"), "write o");
    assert_eq!(
        ops("git format-patch -o dir HEAD~1"),
        "tree-write dir; history ."
    );
    assert_eq!(ops("git commit -o x"), "");
    assert_eq!(ops("git checkout main -- .github"), "tree-write .github");
    assert_eq!(ops("git apply fix.patch"), "read fix.patch; tree-write .");
    assert_eq!(ops("git apply --check fix.patch"), "read fix.patch");
    assert_eq!(ops("git am mails"), "read mails; tree-write .");
    assert_eq!(ops("git worktree add ../wt main"), "tree-write ../wt");
    assert_eq!(
        ops("git clone https://example.com/a/tool.git"),
        "tree-write tool"
    );
    assert_eq!(ops("git clone git@example.com:a/b"), "tree-write b");
    assert_eq!(ops("git clone $URL"), "tree-write .");
    // A pathspec may name a folder: all beneath it is written.
    assert_eq!(
        ops("git restore .github/ci.yml"),
        "tree-write .github/ci.yml"
    );
    assert_eq!(ops("git clean -fdx"), "tree-write .");
    assert_eq!(ops("git -C sub show HEAD:x"), "read sub/x");
    assert_eq!(ops("git -C sub show HEAD"), "history sub");
    assert!(ops("git -c core.pager=sh status").starts_with("opaque"));
    assert_eq!(ops("git -c user.email=a@b commit -m x"), "");
    assert_eq!(ops("git config user.name bot"), "");
    assert_eq!(ops("git config --global core.autocrlf false"), "");
    assert!(ops("git config alias.x '!sh'").starts_with("opaque"));
    assert!(ops("git -c alias.x=!sh x").starts_with("opaque"));
    assert!(ops("git --exec-path=/tmp status").starts_with("opaque"));
    assert!(ops("git diff --ext-diff").starts_with("opaque"));
    assert!(ops("git rebase --exec make HEAD~2").starts_with("opaque"));
    assert!(ops("git bisect run make").starts_with("opaque"));
    assert!(ops("git config alias.x !sh").starts_with("opaque"));
    assert_eq!(ops("git config --get user.name"), "");
    assert!(ops("git submodule foreach rm x").starts_with("opaque"));
}

/// A row for each option and subcommand the model reads, so that
/// misreading one changes an answer.
#[test]
fn every_option_and_subcommand_is_read() {
    // git's own options: the subcommand after them, in every spelling.
    assert_eq!(ops("git --no-pager"), "");
    assert_eq!(ops("git -C sub"), "");
    assert_eq!(ops("git --no-pager rm .github/x"), "write .github/x");
    assert_eq!(ops("git --namespace=n rm f"), "write f");
    assert_eq!(ops("git --namespace n rm f"), "write f");
    // `-C` from the folder before, unless absolute.
    assert_eq!(ops("git -C a -C b rm f"), "write a/b/f");
    assert_eq!(ops("git -C a -C /abs/.github rm f"), "write /abs/.github/f");
    assert_eq!(ops("git -C sub grep x"), "tree-read sub");
    // What git calls an unknown option (`-C=x`, `-cKEY=V`: `-C` and `-c`
    // take the next word only; a later git's option): the subcommand
    // cannot be told.
    let unknown = |o: &str| {
        format!(
            "opaque: `git {o}` is an option of git's own this reading does not know, so its subcommand cannot be told"
        )
    };
    assert_eq!(ops("git -C=x rm f"), unknown("-C=x"));
    assert_eq!(ops("git -ccore.pager=sh log"), unknown("-ccore.pager=sh"));
    assert_eq!(ops("git -cuser.name=bot rm f"), unknown("-cuser.name=bot"));
    assert_eq!(ops("git --super-prefix p/ rm f"), unknown("--super-prefix"));
    // Every other option of git's own, with its value where it takes one.
    assert_eq!(ops("git --attr-source HEAD rm f"), "write f");
    assert_eq!(ops("git --attr-source=HEAD rm f"), "write f");
    assert_eq!(
        ops("git -p --paginate --no-advice --no-lazy-fetch rm f"),
        "write f"
    );
    assert_eq!(
        ops(
            "git --literal-pathspecs --no-literal-pathspecs --glob-pathspecs --noglob-pathspecs --icase-pathspecs --no-optional-locks --no-replace-objects rm f"
        ),
        "write f"
    );
    for (o, name) in [
        ("--bare", "--bare"),
        ("--shallow-file s", "--shallow-file"),
        ("--work-tree w", "--work-tree"),
        ("--git-dir g", "--git-dir"),
    ] {
        assert_eq!(
            ops(&format!("git {o} rm f")),
            format!("opaque: `git {name}` points git at another repository")
        );
    }
    assert_eq!(
        ops("git --config-env core.pager=P log"),
        "opaque: `git --config-env` sets configuration that can make git run other programs"
    );
    // git prints something and ends: nothing runs.
    assert_eq!(ops("git --exec-path rm f"), "");
    assert_eq!(ops("git --html-path rm f"), "");
    assert_eq!(ops("git --list-cmds=main rm f"), "");
    assert_eq!(ops("git -C"), "");
    assert_eq!(
        ops("git --work-tree=w status"),
        "opaque: `git --work-tree` points git at another repository"
    );
    assert_eq!(
        ops("git --git-dir=g status"),
        "opaque: `git --git-dir` points git at another repository"
    );
    assert_eq!(
        ops("git --config-env=core.pager=P log"),
        "opaque: `git --config-env` sets configuration that can make git run other programs"
    );
    // Subcommands' options that name files or run programs.
    assert_eq!(
        ops("git format-patch --output-directory out HEAD~1"),
        "tree-write out; history ."
    );
    assert_eq!(
        ops("git archive -o out.tar HEAD"),
        "write out.tar; history ."
    );
    assert_eq!(ops("git log -o x"), "");
    assert_eq!(
        ops("git blame --contents new.rs -- a.rs"),
        "read new.rs a.rs"
    );
    assert_eq!(
        ops("git rebase -x make main"),
        "opaque: `git rebase -x` runs a command"
    );
    assert_eq!(ops("git cherry-pick -x abc"), "");
    assert_eq!(ops("git commit -F msg.txt"), "read msg.txt");
    assert_eq!(ops("git tag -a -F notes v1"), "read notes");
    assert_eq!(ops("git commit --file=m"), "read m");
    assert_eq!(ops("git log -F x"), "");
    // cat-file: what shows an object's content.
    let by_id = "history .";
    assert_eq!(ops("git cat-file --textconv abc"), by_id);
    assert_eq!(ops("git cat-file --filters abc"), by_id);
    assert_eq!(ops("git cat-file blob abc"), by_id);
    assert_eq!(ops("git cat-file -t abc"), "");
    assert_eq!(ops("git cat-file --textconv HEAD:.env"), "read .env");
    // rm, mv, clean, checkout.
    assert_eq!(ops("git rm -r --cached src"), "tree-write src");
    assert_eq!(ops("git rm --cached -- a b"), "write a b");
    assert_eq!(ops("git mv a .github/b"), "tree-write a .github/b");
    assert_eq!(ops("git mv -- a b"), "tree-write a b");
    assert_eq!(ops("git clean -f build"), "tree-write build");
    assert_eq!(ops("git clean -f -- build"), "tree-write build");
    assert_eq!(ops("git checkout main"), "");
    assert_eq!(ops("git restore --source HEAD~1 src"), "tree-write src");
    assert_eq!(ops("git worktree list"), "");
    assert_eq!(ops("git worktree prune"), "");
    assert_eq!(ops("git worktree lock --reason x wt"), "");
    assert_eq!(
        ops("git worktree add -b feat .github/wt"),
        "tree-write .github/wt"
    );
    assert_eq!(
        ops("git worktree add -f --detach -B feat wt main"),
        "tree-write wt"
    );
    assert_eq!(
        ops("git worktree move out/wt .github/wt"),
        "tree-write out/wt .github/wt"
    );
    assert_eq!(ops("git worktree remove -f wt"), "tree-write wt");
    assert_eq!(ops("git worktree repair -- a b"), "tree-write a b");
    // config: reading a key, and the writes that change what runs.
    assert_eq!(ops("git config core.pager"), "");
    assert_eq!(ops("git config --get-regexp alias x"), "");
    let config = "opaque: `git config` sets values that change what git runs (aliases, pagers, diff drivers, hooks)";
    assert_eq!(ops("git config --edit"), config);
    assert_eq!(ops("git config -e"), config);
    assert_eq!(ops("git config --unset core.pager"), config);
    assert_eq!(ops("git config --unset-all core.pager"), config);
    assert_eq!(ops("git config --unset user.name"), "");
    assert_eq!(ops("git config set user.name bot"), "");
    assert_eq!(ops("git config set core.pager cat"), config);
    // Subcommands that run what the policy cannot see.
    assert_eq!(ops("git bisect start"), "");
    assert_eq!(ops("git submodule update --init"), "");
    for sub in [
        "filter-branch",
        "filter-repo",
        "difftool",
        "mergetool",
        "daemon",
        "instaweb",
        "web--browse",
    ] {
        assert_eq!(
            ops(&format!("git {sub} x")),
            format!("opaque: `git {sub}` runs commands the policy cannot see")
        );
    }
    // The folder a clone makes.
    assert_eq!(ops("git clone https://example.com/a/.."), "tree-write .");
    assert_eq!(ops("git clone host:"), "tree-write .");
    assert_eq!(ops("git clone /srv/.git"), "tree-write .");
    assert_eq!(ops("git clone https://example.com/a/."), "tree-write .");
    assert_eq!(ops("git clone https://example.com/a/`x`"), "tree-write .");
    assert_eq!(
        ops("git clone https://example.com/a/tool/"),
        "tree-write tool"
    );
}

#[test]
fn what_only_reads() {
    let reads = |s: &str| {
        let w: Vec<String> = s.split_whitespace().map(String::from).collect();
        super::only_reads(&w)
    };
    assert!(reads("status"));
    assert!(reads("--no-pager log -p"));
    assert!(reads("diff HEAD -- src"));
    assert!(!reads("commit -m x"));
    assert!(!reads("diff --output=o"));
    assert!(!reads("-c core.pager=sh log"));
    assert!(!reads("format-patch -o out HEAD~1"));
    assert!(!reads("rm f"));
    assert!(!reads("--no-pager"));
}

/// What reads the content git's history holds (issue 72): a read of
/// history beneath the pathspecs, or the whole tree; what only lists
/// commits, names or the work tree is not.
#[test]
fn readers_of_history() {
    for (cmd, want) in [
        ("git log -p", "history ."),
        ("git log --patch --all", "history ."),
        ("git log -p --all -- src", "read src; history src"),
        ("git log -u", "history ."),
        ("git log -pn 3", "history ."),
        ("git log -G password", "history ."),
        ("git log -S hunter2 --all", "history ."),
        ("git log -L 1,5:a.rs", "history ."),
        ("git log --cc", "history ."),
        ("git log --word-diff", "history ."),
        ("git whatchanged -p", "history ."),
        ("git show", "history ."),
        ("git show HEAD~1", "history ."),
        ("git show --stat -p HEAD", "history ."),
        ("git show HEAD~1:.env", "read .env"),
        ("git diff HEAD~1", "history ."),
        ("git diff main feature", "history ."),
        ("git diff A..B -- src", "read src; history src"),
        ("git diff HEAD~50 tests/a.py", "history tests/a.py"),
        ("git diff origin/main", "history ."),
        ("git log -p src/a.rs", "history src/a.rs"),
        ("git format-patch --stdout HEAD~3", "history ."),
        ("git archive HEAD", "history ."),
        ("git archive --format=tar HEAD~1", "history ."),
        ("git bundle create b.bundle --all", "history ."),
        ("git fast-export --all", "history ."),
        ("git range-diff A B C", "history ."),
        ("git grep password HEAD~1", "tree-read .; history ."),
        ("git grep -e password HEAD~1", "tree-read .; history ."),
        ("git grep --cached password", "tree-read .; history ."),
        ("git cat-file -p 0123abcd", "history ."),
        ("git cat-file blob 0123abcd", "history ."),
        ("git cat-file --batch-all-objects --batch", "history ."),
        ("git stash show -p", "history ."),
        ("git unpack-file 0123abcd", "history ."),
        ("git fsck --lost-found", "history ."),
    ] {
        assert_eq!(ops(cmd), want, "{cmd}");
    }
    // Commits, names, sizes and the work tree only.
    for cmd in [
        "git log",
        "git log --oneline --all",
        "git log --stat",
        "git show -s HEAD",
        "git show --name-only HEAD~1",
        "git show --stat",
        "git diff",
        "git diff web/lib/i18n.ts",
        "git diff --cached",
        "git diff --stat",
        "git status",
        "git blame a.rs",
        "git grep TODO",
        "git cat-file -t 0123abcd",
        "git cat-file -s 0123abcd",
        "git stash show",
        "git fsck",
        "git rev-list --all",
        "git ls-tree -r HEAD",
    ] {
        assert!(!ops(cmd).contains("history"), "{cmd}: {}", ops(cmd));
    }
}
