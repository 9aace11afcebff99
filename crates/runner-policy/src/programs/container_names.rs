//! docker's (and podman's) two names for most commands: `docker push` is
//! `docker image push`, `docker rm` is `docker container rm`, `docker ps`
//! is `docker container ls`. A deny rule written with either name meets
//! the other (read for deny rules only: an allow rule allows the words as
//! written).

/// (short command, management group, command in the group).
const SHORTCUTS: &[(&str, &str, &str)] = &[
    ("attach", "container", "attach"),
    ("commit", "container", "commit"),
    ("cp", "container", "cp"),
    ("create", "container", "create"),
    ("diff", "container", "diff"),
    ("exec", "container", "exec"),
    ("export", "container", "export"),
    ("kill", "container", "kill"),
    ("logs", "container", "logs"),
    ("pause", "container", "pause"),
    ("port", "container", "port"),
    ("ps", "container", "ls"),
    ("rename", "container", "rename"),
    ("restart", "container", "restart"),
    ("rm", "container", "rm"),
    ("run", "container", "run"),
    ("start", "container", "start"),
    ("stats", "container", "stats"),
    ("stop", "container", "stop"),
    ("top", "container", "top"),
    ("unpause", "container", "unpause"),
    ("update", "container", "update"),
    ("wait", "container", "wait"),
    ("build", "image", "build"),
    ("history", "image", "history"),
    ("images", "image", "ls"),
    ("import", "image", "import"),
    ("load", "image", "load"),
    ("pull", "image", "pull"),
    ("push", "image", "push"),
    ("rmi", "image", "rm"),
    ("save", "image", "save"),
    ("tag", "image", "tag"),
    ("build", "buildx", "build"),
    ("build", "builder", "build"),
];

/// Other names a group's command goes by in that group.
const GROUP_SYNONYMS: &[(&str, &str)] = &[("list", "ls"), ("remove", "rm")];

/// The other names of a docker or podman command (its words, the program
/// first).
pub fn other_names(words: &[String]) -> Vec<Vec<String>> {
    let plain = super::spec::subcommand_places(words);
    let mut out = Vec::new();
    for (n, &i) in plain.iter().enumerate() {
        let w = words[i].as_str();
        // `docker GROUP COMMAND …` (options may stand between).
        let group_command = plain.get(n + 1).map(|&j| {
            let c = words[j].as_str();
            let c = GROUP_SYNONYMS
                .iter()
                .find(|(syn, _)| *syn == c)
                .map_or(c, |(_, real)| real);
            (j, c)
        });
        if let Some((j, c)) = group_command {
            for (short, _, _) in SHORTCUTS.iter().filter(|(_, g, cmd)| *g == w && *cmd == c) {
                let mut spelled = words[..i].to_vec();
                spelled.push((*short).to_string());
                spelled.extend(words[j + 1..].iter().cloned());
                out.push(spelled);
            }
        }
        for (_, group, cmd) in SHORTCUTS.iter().filter(|(short, _, _)| *short == w) {
            let mut spelled = words[..i].to_vec();
            spelled.push((*group).to_string());
            spelled.push((*cmd).to_string());
            spelled.extend(words[i + 1..].iter().cloned());
            out.push(spelled);
        }
        if !out.is_empty() {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(s: &str) -> Vec<String> {
        let words: Vec<String> = s.split_whitespace().map(str::to_string).collect();
        other_names(&words).iter().map(|w| w.join(" ")).collect()
    }

    #[test]
    fn a_command_by_its_other_name() {
        assert_eq!(read("docker push img"), ["docker image push img"]);
        assert_eq!(read("docker image push img"), ["docker push img"]);
        assert_eq!(
            read("docker --context ci image push img"),
            ["docker --context ci push img"]
        );
        assert_eq!(read("podman container remove c"), ["podman rm c"]);
        assert_eq!(read("docker image list"), ["docker images"]);
        assert_eq!(read("docker ps -a"), ["docker container ls -a"]);
        assert_eq!(
            read("docker build ."),
            [
                "docker image build .",
                "docker buildx build .",
                "docker builder build ."
            ]
        );
        assert_eq!(read("docker buildx build ."), ["docker build ."]);
        for s in [
            "docker version",
            "docker network ls",
            "docker",
            "docker --help",
        ] {
            assert!(read(s).is_empty(), "{s}");
        }
    }
}
