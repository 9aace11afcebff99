//! The decoys: fresh values a task, shaped as the real credentials are,
//! in its commands' variables and in a home of its own.

use std::path::Path;

const UPPER32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// One decoy: its name and its value.
#[derive(Debug, Clone)]
pub struct Canary {
    pub name: String,
    pub value: String,
}

/// The names of the decoys that are variables (the others are in files
/// of the home, their names start with `~/`).
const VARIABLES: [&str; 4] = [
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "GITHUB_TOKEN",
    "OPENAI_API_KEY",
];
const AWS_FILE_ID: &str = "~/.aws/credentials aws_access_key_id";
const AWS_FILE_SECRET: &str = "~/.aws/credentials aws_secret_access_key";
const NETRC: &str = "~/.netrc password";
const GH_HOSTS: &str = "~/.config/gh/hosts.yml oauth_token";

/// `n` random characters of `alphabet`.
fn random(alphabet: &[u8], n: usize) -> String {
    use ring::rand::SecureRandom;
    let mut bytes = vec![0u8; n];
    if ring::rand::SystemRandom::new().fill(&mut bytes).is_err() {
        // No system randomness: the time and the process make them
        // unique enough for a decoy.
        let mut h = crate::hash::Fnv1a::default();
        h.write(format!("{:?}{}", std::time::SystemTime::now(), std::process::id()).as_bytes());
        let mut x = h.finish();
        for b in &mut bytes {
            x = x.rotate_left(7) ^ 0x9e37_79b9_7f4a_7c15;
            *b = x as u8;
        }
    }
    bytes
        .iter()
        .map(|b| alphabet[*b as usize % alphabet.len()] as char)
        .collect()
}

/// Fresh values: each shaped as the credential it stands for.
pub(super) fn fresh() -> Vec<Canary> {
    let aws_id = || format!("AKIA{}", random(UPPER32, 16));
    let aws_secret = || random(ALNUM, 40);
    let github = |prefix: &str| format!("{prefix}{}", random(ALNUM, 36));
    let made = [
        (VARIABLES[0], aws_id()),
        (VARIABLES[1], aws_secret()),
        (VARIABLES[2], github("ghp_")),
        (VARIABLES[3], format!("sk-proj-{}", random(ALNUM, 48))),
        (AWS_FILE_ID, aws_id()),
        (AWS_FILE_SECRET, aws_secret()),
        (NETRC, github("gho_")),
        (GH_HOSTS, github("gho_")),
    ];
    made.into_iter()
        .map(|(name, value)| Canary {
            name: name.to_string(),
            value,
        })
        .collect()
}

/// The decoy of a file at `path` (`canaries.file`): an API key of no
/// vendor's shape in particular.
pub(super) fn file_decoy(path: &str) -> Canary {
    Canary {
        name: format!("{path} api_key"),
        value: format!("sk_live_{}", random(ALNUM, 32)),
    }
}

/// The text of the decoy file at `path`, holding `decoy`, in the format
/// its name says.
pub(super) fn file_text(path: &str, decoy: &Canary) -> String {
    let v = &decoy.value;
    let name = path.rsplit('/').next().unwrap_or(path);
    if name.ends_with(".json") {
        format!(
            "{{\n  \"api_key\": \"{v}\",\n  \"endpoint\": \"https://api.internal.example/v1\"\n}}\n"
        )
    } else if name.ends_with(".yaml") || name.ends_with(".yml") {
        format!("api_key: {v}\nendpoint: https://api.internal.example/v1\n")
    } else if name.starts_with(".env") || name.ends_with(".env") {
        format!("API_KEY={v}\nAPI_ENDPOINT=https://api.internal.example/v1\n")
    } else {
        format!("api_key = {v}\nendpoint = https://api.internal.example/v1\n")
    }
}

/// The SHA-256 of `value`, in hex.
pub(super) fn sha256_hex(value: &str) -> String {
    ring::digest::digest(&ring::digest::SHA256, value.as_bytes())
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The decoys among `list` that are variables, as `(name, value)`.
pub(super) fn variables(list: &[Canary]) -> Vec<(String, String)> {
    list.iter()
        .filter(|c| VARIABLES.contains(&c.name.as_str()))
        .map(|c| (c.name.clone(), c.value.clone()))
        .collect()
}

/// The value of decoy `name` in `list`.
pub(super) fn value<'a>(list: &'a [Canary], name: &str) -> &'a str {
    list.iter()
        .find(|c| c.name == name)
        .map_or("", |c| c.value.as_str())
}

/// Makes `home`, the commands' home: the decoys' files, and a link to
/// every other entry of `real` (the runner's home), so that what commands
/// found in their home they find still, behind the same walls (a link is
/// decided where it leads).
pub(super) fn home_of(list: &[Canary], home: &Path, real: Option<&Path>) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let put = |rel: &str, text: String| -> std::io::Result<()> {
        let p = home.join(rel);
        std::fs::create_dir_all(p.parent().expect("a file in the home"))?;
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&p)?
            .write_all(text.as_bytes())
    };
    std::fs::create_dir_all(home)?;
    put(
        ".aws/credentials",
        format!(
            "[default]\naws_access_key_id = {}\naws_secret_access_key = {}\n",
            value(list, AWS_FILE_ID),
            value(list, AWS_FILE_SECRET)
        ),
    )?;
    put(
        ".netrc",
        format!(
            "machine github.com\n  login x-access-token\n  password {}\n",
            value(list, NETRC)
        ),
    )?;
    put(
        ".config/gh/hosts.yml",
        format!(
            "github.com:\n    oauth_token: {}\n    user: ci-bot\n    git_protocol: https\n",
            value(list, GH_HOSTS)
        ),
    )?;
    if let Some(real) = real {
        link_others(real, home, &[".aws", ".netrc", ".config"])?;
        link_others(&real.join(".config"), &home.join(".config"), &["gh"])?;
    }
    Ok(())
}

/// Links each entry of folder `from` but `except` into `to` (none when
/// `from` cannot be read).
fn link_others(from: &Path, to: &Path, except: &[&str]) -> std::io::Result<()> {
    let Ok(entries) = std::fs::read_dir(from) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let name = e.file_name();
        if except.iter().any(|x| name == *x) {
            continue;
        }
        match std::os::unix::fs::symlink(e.path(), to.join(&name)) {
            Err(err) if err.kind() != std::io::ErrorKind::AlreadyExists => return Err(err),
            _ => {}
        }
    }
    Ok(())
}
