//! JSON access with paths: every missing or mistyped field is an
//! [`InputError`] that names where it is.

use serde_json::Value;

use crate::error::InputError;

pub(crate) fn get<'v>(v: &'v Value, key: &str, path: &str) -> Result<&'v Value, InputError> {
    v.get(key)
        .filter(|x| !x.is_null())
        .ok_or_else(|| InputError::new(format!("{path}.{key}"), "missing"))
}

pub(crate) fn get_str<'v>(v: &'v Value, key: &str, path: &str) -> Result<&'v str, InputError> {
    get(v, key, path)?
        .as_str()
        .ok_or_else(|| InputError::new(format!("{path}.{key}"), "expected a string"))
}

pub(crate) fn get_index(v: &Value, key: &str, path: &str) -> Result<usize, InputError> {
    get(v, key, path)?
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| InputError::new(format!("{path}.{key}"), "expected a non-negative integer"))
}

pub(crate) fn get_array<'v>(
    v: &'v Value,
    key: &str,
    path: &str,
) -> Result<&'v [Value], InputError> {
    get(v, key, path)?
        .as_array()
        .map(Vec::as_slice)
        .ok_or_else(|| InputError::new(format!("{path}.{key}"), "expected an array"))
}

/// An optional array: missing or `null` is empty.
pub(crate) fn opt_array<'v>(
    v: &'v Value,
    key: &str,
    path: &str,
) -> Result<&'v [Value], InputError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(_) => Err(InputError::new(
            format!("{path}.{key}"),
            "expected an array",
        )),
    }
}
