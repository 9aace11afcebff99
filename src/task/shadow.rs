//! `shadow_policy:`: the candidate policy files a task's calls are decided
//! under too, without enforcing them (as `runner run --shadow-policy`).
//! Loaded by the loader `run` and `validate` use, so a candidate
//! `validate` rejects stops the run before anything starts.

use std::path::Path;

use runner_policy::{ConfigError, Policy};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_saphyr::{Location, Spanned};

/// `shadow_policy:` as written: a path or a list of paths, relative to the
/// task file; each a layer of the one candidate.
#[derive(Debug, Clone, JsonSchema)]
#[schemars(with = "PathsAny")]
pub struct ShadowPolicyRef {
    pub paths: Vec<String>,
    pub at: Location,
}

#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
enum PathsAny {
    One(String),
    Many(Vec<String>),
}

impl<'de> Deserialize<'de> for ShadowPolicyRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Through `Spanned` so that an error names the field's line.
        let s: Spanned<PathsAny> = Spanned::deserialize(d)?;
        Ok(ShadowPolicyRef {
            paths: match s.value {
                PathsAny::One(p) => vec![p],
                PathsAny::Many(ps) => ps,
            },
            at: s.referenced,
        })
    }
}

/// The task's candidate layers, its files' `{{files}}` bound to `files`;
/// errors name the task file's line and the candidate's own.
pub fn resolve(
    path: &Path,
    dir: &Path,
    field: Option<&ShadowPolicyRef>,
    files: &[String],
    errors: &mut Vec<ConfigError>,
) -> Vec<Policy> {
    let Some(field) = field else {
        return Vec::new();
    };
    let mut layers = Vec::new();
    for p in &field.paths {
        let file = dir.join(p);
        if !file.is_file() {
            errors.push(ConfigError::at(
                path,
                &field.at,
                format!("shadow_policy: file {} not found", file.display()),
            ));
            continue;
        }
        match runner_policy::load_policy_file(&file).map(|l| l.bind_files(files)) {
            Ok(Ok(layer)) => layers.push(layer),
            Ok(Err(e)) => errors.push(ConfigError::at(
                path,
                &field.at,
                format!("shadow_policy: {e}"),
            )),
            Err(es) => errors.extend(es),
        }
    }
    layers
}
