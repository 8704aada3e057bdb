//! Reading one schema node as written: pointers to its children, its type
//! names, whether it describes an object, and sizes as the limits count them.

use serde_json::{Map, Value};

/// The pointer of `key` under `ptr` (RFC 6901 escaping).
pub(super) fn child(ptr: &str, key: &str) -> String {
    format!("{ptr}/{}", key.replace('~', "~0").replace('/', "~1"))
}

/// The names in a `type` (a string or an array of them).
pub(super) fn type_names(v: &Value) -> Vec<&str> {
    match v {
        Value::String(s) => vec![s.as_str()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Whether the schema describes an object (`type` names it, or it has `properties`).
pub(super) fn is_object_schema(m: &Map<String, Value>) -> bool {
    match m.get("type") {
        Some(t) => type_names(t).contains(&"object"),
        None => m.contains_key("properties"),
    }
}

/// Characters of a value as the limits count them (a string's own, else its JSON).
pub(super) fn json_len(v: &Value) -> usize {
    match v {
        Value::String(s) => s.chars().count(),
        other => other.to_string().chars().count(),
    }
}

/// Subschemas nested in instance position (not `$defs`), with their pointers.
pub(super) fn schema_children<'v>(
    m: &'v Map<String, Value>,
    ptr: &str,
) -> Vec<(String, &'v Value)> {
    let mut out = Vec::new();
    for key in ["properties", "patternProperties", "dependentSchemas"] {
        if let Some(Value::Object(props)) = m.get(key) {
            let p = child(ptr, key);
            out.extend(props.iter().map(|(k, v)| (child(&p, k), v)));
        }
    }
    for key in ["anyOf", "allOf", "oneOf", "prefixItems"] {
        if let Some(Value::Array(items)) = m.get(key) {
            let p = child(ptr, key);
            out.extend(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (child(&p, &i.to_string()), v)),
            );
        }
    }
    for key in [
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
    ] {
        match m.get(key) {
            Some(v @ Value::Object(_)) => out.push((child(ptr, key), v)),
            Some(Value::Array(items)) if key == "items" => {
                let p = child(ptr, key);
                out.extend(
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, v)| (child(&p, &i.to_string()), v)),
                );
            }
            _ => {}
        }
    }
    out
}
