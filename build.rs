//! The `portable` feature builds the portable path of `src/contain/` (no
//! OS sandbox) on any platform, as `--cfg runner_portable` in RUSTFLAGS
//! does: the feature sets the cfg for this crate only, so the
//! dependencies built for the normal build are reused.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(runner_portable)");
    println!("cargo::rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_PORTABLE").is_some() {
        println!("cargo::rustc-cfg=runner_portable");
    }
}
