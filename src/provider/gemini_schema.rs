//! Gemini's dialect of JSON Schema for tool declarations.
//!
//! OpenAI and Anthropic take JSON Schema as schemars writes it (inlined, with
//! `additionalProperties: false` from `deny_unknown_fields`). Gemini takes an
//! OpenAPI subset: no `$ref`/`$defs`/`$schema`, no `additionalProperties`, one
//! `type` per node (`["integer","null"]` becomes `integer` + `nullable`), and
//! only the keywords it knows.

use serde_json::{Map, Value};

const GEMINI_KEYS: &[&str] = &[
    "type",
    "description",
    "enum",
    "properties",
    "required",
    "items",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "nullable",
    "anyOf",
    "format",
    "title",
];

/// Rewrites a JSON Schema into Gemini's subset, inlining `$ref`s.
pub fn gemini_schema(schema: &Value) -> Value {
    let defs = schema
        .get("$defs")
        .or_else(|| schema.get("definitions"))
        .cloned()
        .unwrap_or(Value::Null);
    clean(schema, &defs, 0)
}

fn clean(node: &Value, defs: &Value, depth: usize) -> Value {
    let Some(obj) = node.as_object() else {
        return node.clone();
    };
    if depth > 32 {
        // A recursive type: stop with a permissive leaf.
        return serde_json::json!({"type": "object"});
    }
    if let Some(Value::String(r)) = obj.get("$ref") {
        let name = r.rsplit('/').next().unwrap_or_default();
        if let Some(target) = defs.get(name) {
            return clean(target, defs, depth + 1);
        }
        return serde_json::json!({"type": "object"});
    }
    let mut out = Map::new();
    for (k, v) in obj {
        if !GEMINI_KEYS.contains(&k.as_str()) {
            continue;
        }
        match k.as_str() {
            "type" => match v {
                Value::Array(types) => {
                    let non_null: Vec<&Value> = types
                        .iter()
                        .filter(|t| t.as_str() != Some("null"))
                        .collect();
                    if non_null.len() < types.len() {
                        out.insert("nullable".into(), Value::Bool(true));
                    }
                    if let Some(t) = non_null.first() {
                        out.insert("type".into(), (*t).clone());
                    }
                }
                other => {
                    out.insert("type".into(), other.clone());
                }
            },
            "format" => {
                // Gemini knows few formats; schemars' `uint64` and friends are dropped.
                if matches!(v.as_str(), Some("enum" | "date-time")) {
                    out.insert(k.clone(), v.clone());
                }
            }
            "properties" => {
                let props: Map<String, Value> = v
                    .as_object()
                    .map(|m| {
                        m.iter()
                            .map(|(pk, pv)| (pk.clone(), clean(pv, defs, depth + 1)))
                            .collect()
                    })
                    .unwrap_or_default();
                out.insert(k.clone(), Value::Object(props));
            }
            "items" => {
                out.insert(k.clone(), clean(v, defs, depth + 1));
            }
            "anyOf" => {
                let alts: Vec<Value> = v
                    .as_array()
                    .map(|a| a.iter().map(|x| clean(x, defs, depth + 1)).collect())
                    .unwrap_or_default();
                out.insert(k.clone(), Value::Array(alts));
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strips_refs_and_nullable_types() {
        let s = json!({
            "$schema": "x", "type": "object", "additionalProperties": false,
            "properties": {"a": {"$ref": "#/$defs/A"}, "n": {"type": ["integer", "null"], "format": "uint64", "minimum": 0}},
            "$defs": {"A": {"type": "string", "description": "d"}}
        });
        let g = gemini_schema(&s);
        assert_eq!(
            g,
            json!({"type": "object", "properties": {"a": {"type": "string", "description": "d"},
                   "n": {"type": "integer", "nullable": true, "minimum": 0}}})
        );
    }
}
