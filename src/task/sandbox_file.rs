//! How `sandbox:` is read: a mode (`required`), a switch (`off` and `on`
//! are booleans to YAML 1.1), or the long form. Read by hand rather than
//! as an untagged choice, which would say only "did not match any
//! variant" for a long form with a mistake in it: here a bool is the
//! switch, a string the mode, a map the long form, and the long form's own
//! error (an unknown field, a wrong type, where) is the one reported. The
//! long form's `mode:` takes `off` and `on` as booleans too.

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};

/// `sandbox:` modes as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxModeFile {
    BestEffort,
    Required,
    Off,
}

/// `sandbox:` as written: a mode, or the long form (read by hand: see
/// `sandbox_file`).
#[derive(Debug, Clone, JsonSchema)]
#[serde(untagged)]
pub enum SandboxFile {
    /// `off` and `on` read as booleans in YAML 1.1: false is `off`, true
    /// `best-effort`.
    Switch(bool),
    Mode(SandboxModeFile),
    Full(SandboxFull),
}

/// `sandbox: {mode, network, write}`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SandboxFull {
    /// `best-effort` (the default), `required` or `off`.
    #[serde(default, deserialize_with = "mode")]
    pub mode: Option<SandboxModeFile>,
    /// Whether commands may use the network (default true).
    #[serde(default)]
    pub network: Option<bool>,
    /// More folders commands may write (relative to the task file; `~/`
    /// for the home folder), such as `~/.cargo`.
    #[serde(default)]
    pub write: Vec<String>,
    /// Capabilities a root runner's commands keep, each with its reason
    /// (every other is dropped; the default is none): `[{name: NET_ADMIN,
    /// reason: "the tests add an address to lo"}]`.
    #[serde(default)]
    pub capabilities: Vec<KeptCapability>,
    /// Whether commands get a `/tmp` and `/var/tmp` of their own where the
    /// machine allows it (`runner doctor` says whether it does): folders
    /// of the task, removed with it, where their writes are no edits
    /// outside the workspace. Default true; `false`: they see the
    /// machine's, and writes there are refused as edits outside the
    /// workspace.
    #[serde(default)]
    pub private_tmp: Option<bool>,
    /// More paths commands may read that the readable world leaves out
    /// (the home folder but its toolchains, other homes, the machine's
    /// secrets), such as `~/.config/gcloud` (relative to the task file;
    /// `~/` for the home folder). Where Landlock holds.
    #[serde(default)]
    pub readable: Vec<String>,
    /// Paths commands may not read though the readable world would let
    /// them, such as `/opt/secrets` (relative to the task file; `~/` for
    /// the home folder). Where Landlock holds.
    #[serde(default)]
    pub unreadable: Vec<String>,
}

/// A capability commands keep, and why.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KeptCapability {
    /// Its name, as in capabilities(7), with or without `CAP_`.
    pub name: String,
    /// Why the task needs it (said in the transcript; required).
    #[serde(default)]
    pub reason: String,
}

const MODES: &[&str] = &["best-effort", "required", "off"];

fn mode_named<E: de::Error>(s: &str) -> Result<SandboxModeFile, E> {
    match s {
        "best-effort" => Ok(SandboxModeFile::BestEffort),
        "required" => Ok(SandboxModeFile::Required),
        "off" => Ok(SandboxModeFile::Off),
        other => Err(E::unknown_variant(other, MODES)),
    }
}

fn switch(on: bool) -> SandboxModeFile {
    if on {
        SandboxModeFile::BestEffort
    } else {
        SandboxModeFile::Off
    }
}

struct FileVisitor;

impl<'de> Visitor<'de> for FileVisitor {
    type Value = SandboxFile;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a mode (best-effort, required, off) or {mode, network, write, ...}")
    }

    fn visit_bool<E: de::Error>(self, on: bool) -> Result<SandboxFile, E> {
        Ok(SandboxFile::Switch(on))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<SandboxFile, E> {
        mode_named(s).map(SandboxFile::Mode)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<SandboxFile, A::Error> {
        let full = serde::Deserialize::deserialize(de::value::MapAccessDeserializer::new(map))?;
        Ok(SandboxFile::Full(full))
    }
}

impl<'de> serde::Deserialize<'de> for SandboxFile {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FileVisitor)
    }
}

struct ModeVisitor;

impl<'de> Visitor<'de> for ModeVisitor {
    type Value = Option<SandboxModeFile>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("best-effort, required or off")
    }

    fn visit_bool<E: de::Error>(self, on: bool) -> Result<Self::Value, E> {
        Ok(Some(switch(on)))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        mode_named(s).map(Some)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

/// `sandbox: {mode: ...}`: a mode's name, or `off`/`on` read as booleans.
fn mode<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SandboxModeFile>, D::Error> {
    d.deserialize_any(ModeVisitor)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(yaml: &str) -> Result<SandboxFile, String> {
        serde_saphyr::from_str::<SandboxFile>(yaml).map_err(|e| e.to_string())
    }

    #[test]
    fn each_spelling_is_read_and_a_mistake_is_named() {
        assert!(matches!(read("off"), Ok(SandboxFile::Switch(false))));
        assert!(matches!(
            read("required"),
            Ok(SandboxFile::Mode(SandboxModeFile::Required))
        ));
        for yaml in ["{mode: off}", "{mode: \"off\"}", "{mode: false}"] {
            match read(yaml) {
                Ok(SandboxFile::Full(SandboxFull {
                    mode: Some(SandboxModeFile::Off),
                    ..
                })) => {}
                other => panic!("{yaml}: {other:?}"),
            }
        }
        let e = read("{privat_tmp: true}").unwrap_err();
        assert!(e.contains("unknown field `privat_tmp`"), "{e}");
        let e = read("{mode: sometimes}").unwrap_err();
        assert!(e.contains("sometimes"), "{e}");
        let e = read("bogus").unwrap_err();
        assert!(e.contains("bogus"), "{e}");
    }
}
