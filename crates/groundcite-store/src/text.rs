//! [`JsonText`]: one JSON document of a trace, kept as its text.

use std::fmt;

use serde::de::DeserializeOwned;
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

/// A JSON document (a trace's contract) kept as the text it was written
/// as: serialized once, stored as is, and the same bytes sent to the client.
///
/// Why not [`Value`]: the service built a tree of maps from each contract,
/// wrote it out for the database, and serialized the contract a second time
/// for the response, ~5% of its CPU per request under load.
///
/// Always valid JSON: built by serializing, or from text that parsed.
#[derive(Clone, PartialEq, Eq)]
pub struct JsonText(Box<str>);

impl JsonText {
    /// `value` as compact JSON (written by `sonic_rs`, which escapes strings
    /// with SIMD; serde_json if it refuses).
    pub fn serialize<T: Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        match sonic_rs::to_string(value) {
            Ok(text) => Ok(JsonText(text.into_boxed_str())),
            Err(_) => serde_json::to_string(value).map(|t| JsonText(t.into_boxed_str())),
        }
    }

    /// `value` as compact JSON.
    pub fn from_value(value: &Value) -> Self {
        // Serializing a `Value` cannot fail (string keys only).
        JsonText(value.to_string().into_boxed_str())
    }

    /// Takes `text` if it is one JSON document.
    pub fn parse_text(text: String) -> Result<Self, serde_json::Error> {
        serde_json::from_str::<serde::de::IgnoredAny>(&text)?;
        Ok(JsonText(text.into_boxed_str()))
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The document as a [`Value`].
    pub fn to_value(&self) -> Value {
        // Valid JSON always parses.
        serde_json::from_str(&self.0).unwrap_or(Value::Null)
    }

    /// The document as a `T`.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(&self.0)
    }
}

impl From<JsonText> for String {
    fn from(text: JsonText) -> String {
        text.0.into_string()
    }
}

impl fmt::Debug for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Display for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for JsonText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // serde passes JSON text through only as a `RawValue`, which checks
        // it again: fine off the hot path (trace reads, the CLI).
        RawValue::from_string(self.0.to_string())
            .map_err(S::Error::custom)?
            .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for JsonText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(deserializer).map(|raw| JsonText(Box::<str>::from(raw)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_its_text_and_passes_through_serde() {
        let value = json!({"answerable": true, "claims": [{"text": "a \"b\" ✓\n"}], "n": 1.5});
        let text = JsonText::serialize(&value).unwrap_or_else(|_| JsonText::from_value(&json!(0)));
        assert_eq!(text.as_str(), value.to_string());
        assert_eq!(text, JsonText::from_value(&value));
        assert_eq!(text.to_value(), value);
        let wrapped = serde_json::to_string(&json!({"c": text})).unwrap_or_default();
        assert_eq!(wrapped, format!("{{\"c\":{}}}", value));
        let back: JsonText = serde_json::from_str(&value.to_string())
            .unwrap_or_else(|_| JsonText::from_value(&json!(0)));
        assert_eq!(back, text);
        assert!(JsonText::parse_text("{\"a\":".into()).is_err());
        assert!(JsonText::parse_text("[1] 2".into()).is_err());
        assert_eq!(
            JsonText::parse_text(" [1] ".into())
                .map(|t| t.to_value())
                .ok(),
            Some(json!([1]))
        );
    }
}
