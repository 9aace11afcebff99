//! The narrowest allow rule a reviewer would write for a signature, for
//! `runner policy suggest`: a command's program and subcommand
//! (`Bash(cargo fmt:*)` from `cargo fmt --check`), a file's folder
//! (`Edit(docs/**)` from `docs/guide.md`), a tool by name. Signatures that
//! only an exact rule may allow (opaque commands) get the exact text; a
//! path outside the workspace gets no suggestion: allowing one is a
//! decision a person makes, with an absolute rule.

use crate::signature::{Family, Signature};

/// Programs whose second word picks what they do (`git push`, `cargo
/// test`): a rule names both.
const SUBCOMMAND_PROGRAMS: &[&str] = &[
    "cargo",
    "git",
    "go",
    "npm",
    "npx",
    "pnpm",
    "yarn",
    "pip",
    "pip3",
    "uv",
    "poetry",
    "docker",
    "kubectl",
    "gh",
    "make",
    "dotnet",
    "mvn",
    "gradle",
    "bundle",
    "rake",
    "terraform",
    "helm",
    "rustup",
    "apt",
    "apt-get",
    "brew",
    "deno",
    "bun",
    "just",
    "nix",
];

/// Escapes glob metacharacters in a literal path segment.
fn literal(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        match c {
            '*' | '?' | '[' | ']' | '{' | '}' => {
                out.push('[');
                out.push(c);
                out.push(']');
            }
            _ => out.push(c),
        }
    }
    out
}

fn is_subcommand(word: &str) -> bool {
    !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        && !word.starts_with('-')
}

/// The narrowest rule pattern that allows `sig` as a reviewer would write
/// it; `None` when no rule should be suggested (a path outside the
/// workspace).
pub fn narrowest_rule(sig: &Signature) -> Option<String> {
    let family = sig.family.as_str();
    let Some(spec) = sig.specifier.as_deref() else {
        return Some(family.to_string());
    };
    if sig.opaque.is_some() {
        return Some(format!("{family}({spec})"));
    }
    match sig.family {
        Family::Bash => {
            let mut words = spec.split_whitespace();
            let program = words.next()?;
            let prefix = match words.next() {
                Some(sub) if SUBCOMMAND_PROGRAMS.contains(&program) && is_subcommand(sub) => {
                    format!("{program} {sub}")
                }
                _ => program.to_string(),
            };
            Some(format!("Bash({prefix}:*)"))
        }
        Family::Read | Family::Edit => {
            if spec.starts_with('/') {
                return None;
            }
            let spec = spec.trim_start_matches("./");
            let pattern = match spec.rsplit_once('/') {
                Some((dir, _)) if !sig.tree => format!("{}/**", literal(dir)),
                _ if sig.tree => format!("{}/**", literal(spec.trim_end_matches('/'))),
                _ => literal(spec),
            };
            Some(format!("{family}({pattern})"))
        }
        Family::Memory | Family::Mcp | Family::Tool | Family::Agent => {
            Some(format!("{family}({spec})"))
        }
        // The host: a page's neighbours are as trusted as the page.
        Family::Fetch => Some(format!(
            "{family}({})",
            spec.split('/').next().unwrap_or(spec)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pattern::Pattern;

    fn rule_for(sig: &Signature) -> String {
        let r = narrowest_rule(sig).unwrap();
        let p = Pattern::parse(&r).unwrap();
        assert!(p.matches(sig, false), "{r} does not allow {sig}");
        r
    }

    #[test]
    fn programs_with_subcommands_keep_the_subcommand() {
        let s = Signature::new(Family::Bash, "cargo fmt --check");
        assert_eq!(rule_for(&s), "Bash(cargo fmt:*)");
        let s = Signature::new(Family::Bash, "git push origin main");
        assert_eq!(rule_for(&s), "Bash(git push:*)");
        let s = Signature::new(Family::Bash, "ls -la src");
        assert_eq!(rule_for(&s), "Bash(ls:*)");
        let s = Signature::new(Family::Bash, "git --no-pager log");
        assert_eq!(rule_for(&s), "Bash(git:*)");
    }

    #[test]
    fn files_get_their_folder_and_odd_names_are_escaped() {
        let s = Signature::new(Family::Edit, "docs/guide.md");
        assert_eq!(rule_for(&s), "Edit(docs/**)");
        let s = Signature::new(Family::Edit, "README.md");
        assert_eq!(rule_for(&s), "Edit(README.md)");
        let s = Signature::new(Family::Edit, "a[1]/b.txt");
        assert_eq!(rule_for(&s), "Edit(a[[]1[]]/**)");
        let s = Signature::tree(Family::Read, "src");
        assert_eq!(rule_for(&s), "Read(src/**)");
        assert_eq!(
            narrowest_rule(&Signature::new(Family::Read, "/etc/passwd")),
            None
        );
    }
}
