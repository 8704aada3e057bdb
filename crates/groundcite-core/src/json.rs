//! Hostile JSON text to typed values, with errors that say where: the
//! argument or file, the line and column within its text, and the JSON path
//! of the offending value.
//!
//! One routine for every input path (the CLI's files, the Python package's
//! arguments, the batch verifier's lines), so that each reports a bad input
//! in the same words: [`parse_json`] and [`utf8`] return a [`BadInput`].

use std::fmt;

use serde::de::DeserializeOwned;

use crate::InputError;

/// Input that cannot be used: which argument or file, where in it, and what
/// is wrong. Displays as `SOURCE[:LINE[:COLUMN]][: at PATH]: MESSAGE`, the
/// form the CLI prints (exit code 2) and the Python package raises.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadInput {
    /// The argument or file the error is about (`answer`, `chunks.json`,
    /// `<stdin>`, `--threshold`, …).
    pub source: String,
    /// 1-based line within the text (or, for a batch, the 1-based position
    /// of the item), when known.
    pub line: Option<usize>,
    /// 1-based column, when known.
    pub column: Option<usize>,
    /// JSON path of the offending value, when known.
    pub path: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl BadInput {
    /// An error about the whole of `source`.
    pub fn new(source: &str, message: impl Into<String>) -> BadInput {
        BadInput {
            source: source.to_string(),
            line: None,
            column: None,
            path: None,
            message: message.into(),
        }
    }

    /// An [`InputError`] about `source` (an empty path is the whole input).
    pub fn from_core(source: &str, e: InputError) -> BadInput {
        BadInput {
            path: (!e.path.is_empty()).then_some(e.path),
            ..BadInput::new(source, e.message)
        }
    }
}

impl fmt::Display for BadInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.source)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        if let Some(p) = &self.path {
            write!(f, ": at {p}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for BadInput {}

/// `bytes` as UTF-8, or an error giving the line and byte offset of the
/// first invalid byte.
pub fn utf8<'a>(source: &str, bytes: &'a [u8]) -> Result<&'a str, BadInput> {
    std::str::from_utf8(bytes).map_err(|e| not_utf8(source, bytes, e.valid_up_to()))
}

/// [`utf8`] for bytes already owned, without a copy.
pub fn utf8_owned(source: &str, bytes: Vec<u8>) -> Result<String, BadInput> {
    String::from_utf8(bytes)
        .map_err(|e| not_utf8(source, e.as_bytes(), e.utf8_error().valid_up_to()))
}

fn not_utf8(source: &str, bytes: &[u8], at: usize) -> BadInput {
    let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
    BadInput {
        line: Some(line),
        ..BadInput::new(source, format!("is not valid UTF-8 (byte offset {at})"))
    }
}

/// Parses one JSON document into `T`, refusing trailing content; an error
/// carries the line and column within `text` and the JSON path.
pub fn parse_json<T: DeserializeOwned>(source: &str, text: &str) -> Result<T, BadInput> {
    // Plain serde_json first: only a failure pays for path tracking.
    if let Ok(value) = serde_json::from_str(text) {
        return Ok(value);
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        json_error(source, &inner, (path != ".").then_some(path))
    })?;
    de.end().map_err(|e| json_error(source, &e, None))?;
    // The plain parse failed but the tracked one succeeded: keep the value
    // rather than invent an error.
    Ok(value)
}

fn json_error(source: &str, e: &serde_json::Error, path: Option<String>) -> BadInput {
    // serde_json appends " at line L column C"; they are kept apart.
    let msg = e.to_string();
    let msg = msg
        .rsplit_once(" at line ")
        .map_or(msg.as_str(), |(m, _)| m)
        .to_string();
    BadInput {
        line: (e.line() > 0).then_some(e.line()),
        column: (e.column() > 0).then_some(e.column()),
        path,
        ..BadInput::new(source, msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GroundedAnswer;

    #[test]
    fn errors_name_the_source_line_column_and_path() {
        let e = parse_json::<GroundedAnswer>(
            "answer",
            "{\"answerable\": true,\n \"claims\": [{\"text\": 1, \"citations\": []}]}",
        )
        .unwrap_err();
        assert_eq!(e.path.as_deref(), Some("claims[0].text"));
        assert_eq!((e.line, e.column), (Some(2), Some(22)));
        assert_eq!(
            e.to_string(),
            "answer:2:22: at claims[0].text: invalid type: integer `1`, expected a string"
        );
        let e = parse_json::<GroundedAnswer>("answer", r#"{"answerable": true, "claims": []} x"#)
            .unwrap_err();
        assert_eq!(e.path, None);
        assert!(e.message.starts_with("trailing characters"), "{e}");
    }

    #[test]
    fn bytes_must_be_utf8() {
        let e = utf8("answer", b"{\n\"a\": \"\xff\"}").unwrap_err();
        assert_eq!(
            e.to_string(),
            "answer:2: is not valid UTF-8 (byte offset 8)"
        );
        assert_eq!(utf8("answer", b"{}"), Ok("{}"));
        assert_eq!(
            utf8_owned("f", b"\n\n\xc3".to_vec()).unwrap_err(),
            not_utf8("f", b"\n\n", 2)
        );
        assert_eq!(utf8_owned("f", b"ok".to_vec()).as_deref(), Ok("ok"));
    }
}
