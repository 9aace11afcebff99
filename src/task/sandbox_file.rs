//! How `sandbox:` is read: a mode (`required`), a switch (`off` and `on`
//! are booleans to YAML 1.1), or the long form. Read by hand rather than
//! as an untagged choice, which would say only "did not match any
//! variant" for a long form with a mistake in it: here a bool is the
//! switch, a string the mode, a map the long form, and the long form's own
//! error (an unknown field, a wrong type, where) is the one reported. The
//! long form's `mode:` takes `off` and `on` as booleans too.

use serde::de::{self, Deserializer, MapAccess, Visitor};

use super::model::{SandboxFile, SandboxModeFile};

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
pub(super) fn mode<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SandboxModeFile>, D::Error> {
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
                Ok(SandboxFile::Full(super::super::model::SandboxFull {
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
