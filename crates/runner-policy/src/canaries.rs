//! `canaries:` in a policy or a task: whether its tasks' commands get
//! decoy credentials, and whether one the model reads fails the task (the
//! runner plants and watches them).

use schemars::JsonSchema;

/// `canaries:` as written: `true`, `false`, or `{enabled, fail_on_read,
/// file}`.
#[derive(Debug, Clone, PartialEq, Eq, JsonSchema)]
#[schemars(with = "CanariesAny")]
pub struct CanariesFile {
    /// Whether decoys are planted.
    pub enabled: bool,
    /// Whether a decoy the model reads fails the task.
    pub fail_on_read: bool,
    /// A decoy file planted in the task's copy at this path (relative to
    /// the workspace; a task's only).
    pub file: Option<String>,
    /// The proxy reads HTTPS for them too, with a CA of the task's own that
    /// commands are told to trust.
    pub inspect_https: bool,
}

/// The shapes `canaries:` takes, for the schema.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum CanariesAny {
    On(bool),
    Settings {
        /// Default true.
        enabled: Option<bool>,
        /// A canary the model reads (in a tool's result) fails the task
        /// too (default false: an event and a summary line).
        fail_on_read: Option<bool>,
        /// A decoy credentials file planted in the task's copy at this
        /// path of the workspace (one that is not there), left out of the
        /// diff: a task's only.
        file: Option<String>,
        /// The task's proxy ends its commands' TLS with a CA of the
        /// task's own (which they are told to trust) to look for the
        /// canaries inside HTTPS too (default false: a tunnel's bytes
        /// are relayed unread, only its host checked).
        inspect_https: Option<bool>,
    },
}

impl<'de> serde::Deserialize<'de> for CanariesFile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = CanariesFile;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("true, false or {enabled, fail_on_read, file, inspect_https}")
            }
            fn visit_bool<E: serde::de::Error>(self, on: bool) -> Result<CanariesFile, E> {
                Ok(CanariesFile {
                    enabled: on,
                    fail_on_read: false,
                    file: None,
                    inspect_https: false,
                })
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut map: M,
            ) -> Result<CanariesFile, M::Error> {
                let mut out = CanariesFile {
                    enabled: true,
                    fail_on_read: false,
                    file: None,
                    inspect_https: false,
                };
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "enabled" => out.enabled = map.next_value()?,
                        "fail_on_read" => out.fail_on_read = map.next_value()?,
                        "file" => out.file = Some(map.next_value()?),
                        "inspect_https" => out.inspect_https = map.next_value()?,
                        other => {
                            return Err(serde::de::Error::unknown_field(
                                other,
                                &["enabled", "fail_on_read", "file", "inspect_https"],
                            ));
                        }
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_any(Visit)
    }
}
