//! npm's subcommands by the abbreviations npm takes for them: any prefix
//! that names one command (`npm pub` and `npm pu` are `npm publish`), as
//! npm's `deref` (lib/utils/cmd-list.js, npm 11) resolves them. So a rule
//! on `npm publish` meets `npm pub`. A prefix of several is read as each
//! of them (npm refuses it: nothing runs, and a deny rule on any of them
//! refuses it too), which also covers a later npm's commands sharing it.

/// npm 11's commands and aliases (lib/utils/cmd-list.js).
const COMMANDS: &[&str] = &[
    "access",
    "adduser",
    "approve-scripts",
    "audit",
    "bugs",
    "cache",
    "ci",
    "completion",
    "config",
    "dedupe",
    "deny-scripts",
    "deprecate",
    "diff",
    "dist-tag",
    "docs",
    "doctor",
    "edit",
    "exec",
    "explain",
    "explore",
    "find-dupes",
    "fund",
    "get",
    "help",
    "help-search",
    "init",
    "install",
    "install-ci-test",
    "install-scripts",
    "install-test",
    "link",
    "ll",
    "login",
    "logout",
    "ls",
    "org",
    "outdated",
    "owner",
    "pack",
    "ping",
    "pkg",
    "prefix",
    "profile",
    "prune",
    "publish",
    "query",
    "rebuild",
    "repo",
    "restart",
    "root",
    "run",
    "sbom",
    "search",
    "set",
    "shrinkwrap",
    "stage",
    "star",
    "stars",
    "start",
    "stop",
    "team",
    "test",
    "token",
    "trust",
    "undeprecate",
    "uninstall",
    "unpublish",
    "unstar",
    "update",
    "version",
    "view",
    "whoami",
];

/// How many of npm's first plain words may be its subcommand (the others
/// an option's value: `npm --loglevel silent publish`).
const LOOK_AT: usize = 3;

/// The commands `npm` (its words, `npm` first) also runs as: its
/// subcommand word written as a prefix of commands, each of them in its
/// place. None for a command written whole (or an alias of one).
pub fn abbreviations(words: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let plain = words
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, w)| !w.starts_with('-'))
        .take(LOOK_AT);
    for (i, w) in plain {
        if w.is_empty() || COMMANDS.contains(&w.as_str()) || ALIASES.contains(&w.as_str()) {
            break;
        }
        for c in COMMANDS.iter().filter(|c| c.starts_with(w.as_str())) {
            let mut spelled = words.to_vec();
            spelled[i] = (*c).to_string();
            out.push(spelled);
        }
    }
    out
}

/// npm's aliases (lib/utils/cmd-list.js): a word npm reads as another
/// command, never as a prefix.
const ALIASES: &[&str] = &[
    "author",
    "home",
    "issues",
    "info",
    "show",
    "find",
    "add",
    "unlink",
    "remove",
    "rm",
    "r",
    "un",
    "rb",
    "list",
    "ln",
    "create",
    "i",
    "it",
    "cit",
    "u",
    "up",
    "c",
    "s",
    "se",
    "tst",
    "t",
    "ddp",
    "v",
    "run-script",
    "clean-install",
    "clean-install-test",
    "x",
    "why",
    "la",
    "verison",
    "ic",
    "innit",
    "in",
    "ins",
    "inst",
    "insta",
    "instal",
    "isnt",
    "isnta",
    "isntal",
    "isntall",
    "install-clean",
    "isntall-clean",
    "hlep",
    "dist-tags",
    "upgrade",
    "udpate",
    "rum",
    "sit",
    "urn",
    "ogr",
    "add-user",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn read(s: &str) -> Vec<String> {
        abbreviations(&words(s))
            .iter()
            .map(|w| w.join(" "))
            .collect()
    }

    #[test]
    fn a_prefix_is_each_command_it_begins() {
        assert_eq!(read("npm pub"), ["npm publish"]);
        assert_eq!(
            read("npm pu --access public"),
            ["npm publish --access public"]
        );
        assert_eq!(
            read("npm --loglevel silent publi"),
            ["npm --loglevel silent publish"]
        );
        assert_eq!(read("npm unp"), ["npm unpublish"]);
        assert_eq!(
            read("npm p"),
            [
                "npm pack",
                "npm ping",
                "npm pkg",
                "npm prefix",
                "npm profile",
                "npm prune",
                "npm publish"
            ]
        );
        // Whole commands and aliases are what they are.
        for s in [
            "npm publish",
            "npm i x",
            "npm run pub",
            "npm t",
            "npm ci",
            "npm",
            "npm -v",
        ] {
            assert!(read(s).is_empty(), "{s}");
        }
        // Past the first few plain words, none is the subcommand.
        assert!(read("npm zz yy xx pub").is_empty());
    }
}
