use super::*;

#[test]
fn options_with_values_attached() {
    assert_eq!(attached_value("--jobs=$N"), Some(("--jobs", "$N")));
    assert_eq!(attached_value("--dry-run=$X"), Some(("--dry-run", "$X")));
    assert_eq!(attached_value("--max_x=$X"), Some(("--max_x", "$X")));
    assert_eq!(attached_value("-j$(nproc)"), Some(("-j", "$(nproc)")));
    assert_eq!(attached_value("--=x"), None);
    assert_eq!(attached_value("--$X=1"), None);
    assert_eq!(attached_value("--jobs"), None);
    assert_eq!(attached_value("-$X"), None);
}

#[test]
fn words_only_known_at_run_time() {
    for w in [
        "$x", "`x`", "*.rs", "a?", "{a,b}", "~/x", "a[1]", "[x]", "<(...)",
    ] {
        assert!(is_runtime_word(w), "{w}");
    }
    for w in ["plain", "a][", "a[", "-j4"] {
        assert!(!is_runtime_word(w), "{w}");
    }
    assert!(!runtime_text("-j$((2+2))"));
    assert!(!runtime_text("-j$((1+$x))"));
    assert!(runtime_text("-j$((2+2))$x"));
    assert!(runtime_text("-j$((2+2"));
    assert!(runtime_text("--out=`pwd`"));
}
