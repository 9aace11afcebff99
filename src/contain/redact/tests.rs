use super::*;

/// A secret learnt after start-up is redacted from the shortest length
/// told apart from text (`MIN_VALUE_LEN`, after trimming) up.
#[test]
fn a_secret_learnt_later_is_redacted_from_its_minimum_length() {
    add_secret("  Lq8Zr4Vw  ");
    add_secret("Pj5Ty3K");
    // A second secret, and the first again (kept once).
    add_secret("Hn2Wx7Cd-second");
    add_secret("Lq8Zr4Vw");
    let out = redact("a Lq8Zr4Vw b Pj5Ty3K c Hn2Wx7Cd-second d");
    assert_eq!(out, "a [REDACTED] b Pj5Ty3K c [REDACTED] d");
    let extra = EXTRA.read().unwrap_or_else(|e| e.into_inner());
    assert_eq!(extra.forms.iter().filter(|e| *e == "Lq8Zr4Vw").count(), 1);
}

#[test]
fn values_and_shapes_are_replaced() {
    let r = Redactor::from_env([
        ("MY_TOKEN".to_string(), "hunter2-very-secret".to_string()),
        ("SHORT_KEY".to_string(), "abc".to_string()),
        ("PATH".to_string(), "/usr/bin:/bin".to_string()),
    ]);
    let text = "token=hunter2-very-secret path=/usr/bin:/bin abc \
                ghp_0123456789abcdefghijABCDEFGHIJ012345 AKIAIOSFODNN7EXAMPLE \
                sk-proj-abcdefghijklmnopqrstuvwx";
    let out = r.redact(text);
    assert_eq!(
        out,
        "token=[REDACTED] path=/usr/bin:/bin abc [REDACTED] [REDACTED] [REDACTED]"
    );
}

#[test]
fn an_otlp_headers_variable_is_masked_value_by_value() {
    let r = Redactor::from_env([(
        "OTEL_EXPORTER_OTLP_HEADERS".to_string(),
        "authorization=Bearer otlp-token-123456,x-team=core".to_string(),
    )]);
    let out = r.redact("sent Bearer otlp-token-123456 to the collector");
    assert_eq!(out, format!("sent {MARK} to the collector"));
    // A short value is left alone, as any other.
    assert_eq!(r.redact("team core"), "team core");
}

#[test]
fn private_key_blocks_go_whole() {
    let r = Redactor::new([]);
    let text = "a\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\nAAAA\n-----END OPENSSH PRIVATE KEY-----\nz";
    assert_eq!(r.redact(text), "a\n[REDACTED]\nz");
    // Cut short (a capped output): everything after the header goes.
    assert_eq!(
        r.redact("-----BEGIN RSA PRIVATE KEY-----\nMIIE"),
        "[REDACTED]"
    );
}

#[test]
fn each_token_shape_is_replaced() {
    let r = Redactor::new([]);
    for token in [
        "ghs_16C7e42F292c6912E7710c838347Ae178B4a",
        "gho_16C7e42F292c6912E7710c838347Ae178B4a",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "npm_abcdefghijklmnopqrstuvwxyz0123456789",
        "pypi-AgEIcHlwaS5vcmcCJGE0ZDY1ZjM0LTk0ZDEtNDc0Ny1iYmRjLWY4ZmQ0ZDRkMzM2NgAC",
        "AKIAIOSFODNN7EXAMPLE",
        "xoxb-123456789012-abcdefghijkl",
        "sk-proj-abcdefghijklmnopqrstuvwx",
    ] {
        let text = format!("before {token} after");
        assert_eq!(r.redact(&text), format!("before {MARK} after"), "{token}");
    }
}

#[test]
fn a_checkout_header_and_a_url_password_keep_their_names() {
    let r = Redactor::new([]);
    let header = "http.https://github.com/.extraheader=AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46dG9rLXNlY3JldC12YWx1ZQ==";
    assert_eq!(
        r.redact(header),
        format!("http.https://github.com/.extraheader=AUTHORIZATION: basic {MARK}")
    );
    // The encoded token alone, as `grep -r x-access-token` can't find it.
    assert_eq!(
        r.redact("value eC1hY2Nlc3MtdG9rZW46dG9rLXNlY3JldC12YWx1ZQ== end"),
        format!("value {MARK} end")
    );
    assert_eq!(
        r.redact("origin https://x-access-token:tok-secret-value@github.com/o/r (fetch)"),
        format!("origin https://x-access-token:{MARK}@github.com/o/r (fetch)")
    );
    // A user without a password, and ordinary URLs, stay.
    for plain in ["ssh://git@github.com/o/r", "https://github.com/o/r?a=b:c@d"] {
        assert_eq!(r.redact(plain), plain);
    }
}

#[test]
fn a_value_is_found_base64_and_url_encoded() {
    let value = "tok-secret/value+9";
    let r = Redactor::new([value.to_string()]);
    let b64 = |s: &str| base64(s.as_bytes());
    // Alone, after `x-access-token:` (another alignment), and inside a
    // longer encoded text at each alignment.
    for text in [
        b64(value),
        b64(&format!("x-access-token:{value}")),
        b64(&format!("a{value}zz")),
        b64(&format!("ab{value}z")),
        "tok-secret%2Fvalue%2B9".to_string(),
    ] {
        let out = r.redact(&text);
        assert!(out.contains(MARK), "{text} -> {out}");
        assert!(
            !out.contains(&text[text.len() / 3..text.len() * 2 / 3]),
            "{text}"
        );
    }
    assert_eq!(base64(b"x-access-token:"), "eC1hY2Nlc3MtdG9rZW46");
    assert_eq!(base64(b"hello"), "aGVsbG8");
}

#[test]
fn clean_text_is_not_copied() {
    let r = Redactor::new(["secret-value".to_string()]);
    assert!(matches!(r.redact("nothing here"), Cow::Borrowed(_)));
}

#[derive(serde::Deserialize)]
struct Row {
    name: String,
    value: String,
    #[serde(default)]
    parts: Vec<String>,
}

#[derive(serde::Deserialize)]
struct Corpus {
    secrets: Vec<Row>,
    near_misses: Vec<Row>,
}

/// The corpus of shapes (issue 72): each secret's parts are found and
/// redacted, in a variable of any name; no near miss is touched.
#[test]
fn secret_shaped_values_and_their_near_misses() {
    let corpus: Corpus = serde_saphyr::from_str(include_str!(
        "../../../tests/fixtures/redaction/values.yaml"
    ))
    .unwrap();
    for row in &corpus.secrets {
        let parts = secrets_of(&row.name, &row.value);
        assert_eq!(parts, row.parts, "{}={}", row.name, row.value);
        let r = Redactor::from_env([(row.name.clone(), row.value.clone())]);
        let text = format!("value: {}", row.value);
        let out = r.redact(&text);
        for p in &row.parts {
            assert!(!out.contains(p.as_str()), "{}: {out}", row.name);
        }
    }
    for row in &corpus.near_misses {
        assert!(
            secrets_of(&row.name, &row.value).is_empty(),
            "{}={} taken for a secret",
            row.name,
            row.value
        );
        let r = Redactor::from_env([(row.name.clone(), row.value.clone())]);
        let text = format!("commit {} in {}", row.value, row.name);
        assert_eq!(r.redact(&text), text, "{}", row.name);
    }
    assert!(corpus.secrets.len() >= 15 && corpus.near_misses.len() >= 15);
}

/// A value in hex (both cases), reversed, and as JSON strings hold it and
/// its other forms.
#[test]
fn a_value_is_found_in_hex_reversed_and_inside_json() {
    let value = "Pg-pass/2718\"28";
    let r = Redactor::new([value.to_string()]);
    let hex: String = value.bytes().map(|b| format!("{b:02x}")).collect();
    let json = |s: &str| serde_json::to_string(s).unwrap();
    for text in [
        hex.clone(),
        hex.to_ascii_uppercase(),
        value.chars().rev().collect::<String>(),
        json(value),
        json(&base64(value.as_bytes())),
        json(&base64(value.as_bytes())).replace('/', "\\/"),
        json(&format!("{{\"db\": \"{value}\"}}")),
    ] {
        let out = r.redact(&text);
        assert!(out.contains(MARK), "{text} -> {out}");
        assert!(!out.contains("2718"), "{text} -> {out}");
    }
}
