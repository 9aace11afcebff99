//! A task's `output_schema:`: its final answer must be a JSON value valid
//! against a JSON Schema (Draft 2020-12). An answer that is not JSON or
//! breaks the schema goes back to the model with the errors, and costs a
//! turn.

use serde_json::Value;

/// Errors sent back to the model at most.
const MAX_ERRORS: usize = 10;

/// A compiled `output_schema:`.
pub struct OutputSchema {
    /// The schema as written (sent to vendors that can enforce it).
    pub schema: Value,
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for OutputSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputSchema")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

/// Why a value is not a JSON Schema (draft 2020-12), as the validator
/// says.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotASchema(String);

impl OutputSchema {
    /// Compiles a schema; the error says why it is not one.
    pub fn new(schema: Value) -> Result<Self, NotASchema> {
        let validator =
            jsonschema::draft202012::new(&schema).map_err(|e| NotASchema(e.to_string()))?;
        Ok(Self { schema, validator })
    }

    /// The answer as JSON when it is valid; else what is wrong with it,
    /// the first error first. A whole answer in a ```json fence counts as
    /// its content.
    pub fn check(&self, answer: &str) -> Result<Value, Vec<String>> {
        let text = unfence(answer.trim());
        let value: Value =
            serde_json::from_str(text).map_err(|e| vec![format!("the answer is not JSON: {e}")])?;
        let errors: Vec<String> = self
            .validator
            .iter_errors(&value)
            .take(MAX_ERRORS)
            .map(|e| {
                let at = e.instance_path().to_string();
                if at.is_empty() {
                    format!("{e}")
                } else {
                    format!("at {at}: {e}")
                }
            })
            .collect();
        if errors.is_empty() {
            Ok(value)
        } else {
            Err(errors)
        }
    }

    /// What the model is told when its answer does not do.
    pub fn feedback(&self, errors: &[String]) -> String {
        format!(
            "Your final answer must be a single JSON value, valid against this JSON Schema, and nothing else:\n{}\n\nYour answer was not accepted:\n- {}",
            serde_json::to_string_pretty(&self.schema).unwrap_or_default(),
            errors.join("\n- ")
        )
    }
}

/// The inside of a ```json (or ```) fence around the whole text.
fn unfence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let Some(body) = rest.strip_suffix("```") else {
        return text;
    };
    let body = body.strip_prefix("json").unwrap_or(body);
    body.trim()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_are_checked_and_errors_name_the_place() {
        let s = OutputSchema::new(json!({
            "type": "object", "required": ["label"],
            "properties": {"label": {"enum": ["bug", "feature"]}}
        }))
        .unwrap();
        assert!(s.check("it is a bug").is_err());
        assert_eq!(
            s.check("```json\n{\"label\": \"bug\"}\n```").unwrap(),
            json!({"label": "bug"})
        );
        let e = s.check("{\"label\": \"question\"}").unwrap_err();
        assert!(e[0].starts_with("at /label: "), "{e:?}");
        assert!(OutputSchema::new(json!({"type": 5})).is_err());
    }
}
