use std::time::Instant;

use super::*;

fn canaries() -> Canaries {
    Canaries::new(false, None, Instant::now())
}

#[test]
fn each_run_gets_its_own_values_shaped_as_the_real_ones() {
    let (a, b) = (canaries(), canaries());
    assert_eq!(a.list().len(), 8);
    for (x, y) in a.list().iter().zip(b.list()) {
        assert_eq!(x.name, y.name);
        assert_ne!(x.value, y.value, "{}", x.name);
    }
    let vars = a.variables();
    let names: Vec<&str> = vars.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        [
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "GITHUB_TOKEN",
            "OPENAI_API_KEY"
        ]
    );
    assert!(vars[0].1.starts_with("AKIA") && vars[0].1.len() == 20);
    assert_eq!(vars[1].1.len(), 40);
    assert!(vars[2].1.starts_with("ghp_"));
    assert!(vars[3].1.starts_with("sk-proj-"));
}

#[test]
fn a_value_is_found_in_its_encoded_forms_and_nothing_else_is() {
    let c = canaries();
    let secret = c.variables()[1].1.clone();
    let b64 = |s: &str| crate::contain::redact::forms::forms(s);
    assert!(c.find(b"nothing to see here").is_none());
    // In a host name, lower-cased.
    let host = format!("{}.evil.test", secret.to_ascii_lowercase());
    assert!(c.find(host.as_bytes()).is_some(), "{host}");
    for text in [
        format!("aws={secret}&x=1"),
        format!("prefix {}", secret.chars().rev().collect::<String>()),
        secret
            .bytes()
            .map(|b| format!("{b:02x}"))
            .collect::<String>(),
    ] {
        assert_eq!(
            c.find(text.as_bytes()).map(|c| c.name.as_str()),
            Some("AWS_SECRET_ACCESS_KEY"),
            "{text}"
        );
    }
    // base64 at each alignment, inside a longer text.
    for pad in ["", "a", "ab"] {
        let encoded = encode(format!("{pad}key={secret}\n").as_bytes());
        assert!(c.find(encoded.as_bytes()).is_some(), "{pad}: {encoded}");
    }
    assert!(b64(&secret).len() > 4);
}

/// Standard base64 with padding, as `base64` prints it.
fn encode(bytes: &[u8]) -> String {
    let out = std::process::Command::new("base64")
        .arg("-w0")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(bytes)?;
            c.wait_with_output()
        })
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_first_that_moves_trips_and_a_read_only_under_fail_on_read() {
    let c = canaries();
    let token = c.variables()[2].1.clone();
    c.read(&format!("GITHUB_TOKEN={token}"), "c1 (bash)", || {
        "the result of call c1".into()
    });
    assert!(c.tripped().is_none(), "a read is an event");
    let news = c.news(1, &["c1 (bash)".into(), "c2 (ls)".into()]);
    assert_eq!(news.len(), 1);
    assert_eq!(news[0].turn, Some(1));
    assert_eq!(
        news[0].calls,
        ["c1 (bash)"],
        "the call whose result held it"
    );
    assert!(c.news(2, &[]).is_empty(), "told once");
    assert!(!c.moving(b"GET / HTTP/1.1", || unreachable!()));
    assert!(c.moving(token.as_bytes(), || "a proxied request".into()));
    // The turn's calls are named as what moved it.
    assert_eq!(c.news(3, &["c5 (bash)".into()])[0].calls, ["c5 (bash)"]);
    let t = c.tripped().unwrap();
    assert!(t.moved && t.canary == "GITHUB_TOKEN" && t.seen_in == "a proxied request");
    assert_eq!(t.turn, Some(3));
    assert!(
        reason(&t).ends_with("(turn 3, c5 (bash))"),
        "{}",
        reason(&t)
    );
    let strict = Canaries::new(true, None, Instant::now());
    let key = strict.variables()[3].1.clone();
    strict.read(&key, "c1 (bash)", || "env".into());
    assert_eq!(strict.tripped().map(|s| s.moved), Some(false));
    // The record names and hashes, never the values.
    let rec = serde_json::to_string(&c.record()).unwrap();
    assert!(
        !rec.contains(&token) && rec.contains("GITHUB_TOKEN"),
        "{rec}"
    );
    assert_eq!(c.record().planted[0].sha256.len(), 64);
}

#[test]
fn the_home_holds_the_decoys_and_links_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    for f in [
        ".cargo/bin/cargo",
        ".gitconfig",
        ".aws/config",
        ".config/git/config",
        ".config/gh/hosts.yml",
    ] {
        let p = real.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, "real").unwrap();
    }
    let c = canaries();
    let home = dir.path().join("home");
    c.make_home(&home, Some(&real)).unwrap();
    let read = |p: &str| std::fs::read_to_string(home.join(p)).unwrap();
    assert!(
        read(".aws/credentials").contains(
            &c.value("~/.aws/credentials aws_secret_access_key")
                .to_string()
        )
    );
    assert!(read(".netrc").contains("password gho_"));
    assert!(read(".config/gh/hosts.yml").contains("oauth_token: gho_"));
    // The real files stay where they are; the others are reached through links.
    assert_eq!(read(".cargo/bin/cargo"), "real");
    assert_eq!(read(".gitconfig"), "real");
    assert_eq!(read(".config/git/config"), "real");
    assert!(
        !home.join(".aws/config").exists(),
        "the decoy folder is the task's own"
    );
    assert_eq!(
        std::fs::read_to_string(real.join(".config/gh/hosts.yml")).unwrap(),
        "real"
    );
}

#[test]
fn a_decoy_file_holds_its_own_value_in_its_formats_shape() {
    for (path, shape) in [
        ("config/credentials.json", "\"api_key\": \"sk_live_"),
        ("deploy/secrets.yaml", "api_key: sk_live_"),
        (".env.production", "API_KEY=sk_live_"),
        ("keys.txt", "api_key = sk_live_"),
    ] {
        let c = Canaries::new(false, Some(path.into()), Instant::now());
        assert_eq!(c.list().len(), 9);
        let (at, text) = c.decoy_file().unwrap();
        assert_eq!(at, path);
        assert!(text.contains(shape), "{path}: {text}");
        assert_eq!(
            c.find(text.as_bytes()).unwrap().name,
            format!("{path} api_key")
        );
    }
    assert!(canaries().decoy_file().is_none());
}
