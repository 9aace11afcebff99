fn tok(name: &str, t: &str) {
    let s = std::time::Instant::now();
    let r = brush_parser::tokenize_str(t);
    eprintln!("{name}: ok={} len={} {:?}", r.is_ok(), t.len(), s.elapsed());
}
fn main() {
    let code: String = (0..250000).map(|_| "a b;").collect();
    tok("1MB code", &code);
    let body: String = (0..20000)
        .map(|i| format!("print('line {i} (x) {{y}}')\n"))
        .collect();
    tok("500k heredoc", &format!("cat <<'EOF' > f.py\n{body}EOF\n"));
    tok("$( x64", &format!("{}x{}", "$(".repeat(64), ")".repeat(64)));
    tok(
        "$( x1000",
        &format!("{}x{}", "$(".repeat(1000), ")".repeat(1000)),
    );
    tok("( x64", &format!("{}x{}", "( ".repeat(64), " )".repeat(64)));
    tok(
        "\"$( x64",
        &format!("{}x{}", "\"$(".repeat(64), ")\"".repeat(64)),
    );
    tok(
        "${ x64",
        &format!("{}x{}", "${a:-".repeat(64), "}".repeat(64)),
    );
    tok("unclosed $( x64", &"$(".repeat(64));
    tok("unclosed ( (( x32", &"( ((".repeat(32));
    let many: String = (0..2500)
        .map(|i| format!("cat <<EOF > f{i}\nx\ny\nEOF\n"))
        .collect();
    tok("2500 heredocs", &many);
}
