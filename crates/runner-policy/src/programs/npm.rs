//! npm's subcommands by the other words npm takes for them: its aliases
//! (`npm rm` is `npm uninstall`) and any prefix that names one command or
//! alias (`npm pub` and `npm pu` are `npm publish`), as npm's `deref`
//! (lib/utils/cmd-list.js, npm 11) resolves them. So a rule on `npm
//! publish` meets `npm pub` (read for deny rules only). A prefix of
//! several is read as each of them (npm refuses it: nothing runs, and a
//! deny rule on any of them refuses it too), which also covers a later
//! npm's commands sharing it.

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

/// The commands `npm` (its words, `npm` first) also runs as: its
/// subcommand word an alias (`npm rm`: `npm uninstall`), or a prefix of
/// commands or aliases (each in its place). None for a command written
/// whole.
pub fn abbreviations(words: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let alias = |w: &str| ALIASES.iter().find(|(a, _)| *a == w).map(|(_, c)| *c);
    for i in super::spec::subcommand_places(words) {
        let w = &words[i];
        if w.is_empty() || COMMANDS.contains(&w.as_str()) {
            break;
        }
        let mut commands: Vec<&str> = match alias(w) {
            Some(c) => vec![c],
            None => COMMANDS
                .iter()
                .copied()
                .filter(|c| c.starts_with(w.as_str()))
                .chain(
                    ALIASES
                        .iter()
                        .filter(|(a, _)| a.starts_with(w.as_str()))
                        .map(|(_, c)| *c),
                )
                .collect(),
        };
        commands.sort_unstable();
        commands.dedup();
        for c in &commands {
            let mut spelled = words.to_vec();
            spelled[i] = (*c).to_string();
            out.push(spelled);
        }
        if !commands.is_empty() {
            break;
        }
    }
    out
}

/// npm's aliases (lib/utils/cmd-list.js): a word npm reads as another
/// command.
const ALIASES: &[(&str, &str)] = &[
    ("author", "owner"),
    ("home", "docs"),
    ("issues", "bugs"),
    ("info", "view"),
    ("show", "view"),
    ("find", "search"),
    ("add", "install"),
    ("unlink", "uninstall"),
    ("remove", "uninstall"),
    ("rm", "uninstall"),
    ("r", "uninstall"),
    ("un", "uninstall"),
    ("rb", "rebuild"),
    ("list", "ls"),
    ("ln", "link"),
    ("create", "init"),
    ("i", "install"),
    ("it", "install-test"),
    ("cit", "install-ci-test"),
    ("u", "update"),
    ("up", "update"),
    ("c", "config"),
    ("s", "search"),
    ("se", "search"),
    ("tst", "test"),
    ("t", "test"),
    ("ddp", "dedupe"),
    ("v", "view"),
    ("run-script", "run"),
    ("clean-install", "ci"),
    ("clean-install-test", "install-ci-test"),
    ("x", "exec"),
    ("why", "explain"),
    ("la", "ll"),
    ("verison", "version"),
    ("ic", "ci"),
    ("innit", "init"),
    ("in", "install"),
    ("ins", "install"),
    ("inst", "install"),
    ("insta", "install"),
    ("instal", "install"),
    ("isnt", "install"),
    ("isnta", "install"),
    ("isntal", "install"),
    ("isntall", "install"),
    ("install-clean", "ci"),
    ("isntall-clean", "ci"),
    ("hlep", "help"),
    ("dist-tags", "dist-tag"),
    ("upgrade", "update"),
    ("udpate", "update"),
    ("rum", "run"),
    ("sit", "install-ci-test"),
    ("urn", "run"),
    ("ogr", "org"),
    ("add-user", "adduser"),
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
        // An alias is its command, and a prefix of one is too.
        assert_eq!(read("npm rm x"), ["npm uninstall x"]);
        assert_eq!(read("npm i x"), ["npm install x"]);
        assert_eq!(read("npm isntal x"), ["npm install x"]);
        assert_eq!(read("npm clean-install-t"), ["npm install-ci-test"]);
        // Whole commands are what they are.
        for s in ["npm publish", "npm run pub", "npm ci", "npm", "npm -v"] {
            assert!(read(s).is_empty(), "{s}");
        }
        // Past the first few plain words, none is the subcommand.
        assert!(read("npm zz yy xx pub").is_empty());
    }
}
