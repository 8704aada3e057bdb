//! Hostile input to typed values: JSON text parsed with the CLI's rules
//! (one document, trailing content refused, errors with line, column and
//! JSON path), and the failures the Python layer raises.

use groundcite_core::prose::CitationFormatError;
use groundcite_core::{Chunk, ChunkSet, InputError};
use serde::de::DeserializeOwned;

/// Bad input: which argument, where in it, and what is wrong. Raised in
/// Python as `groundcite.InputError` (a `ValueError`), printed as the CLI
/// prints bad input: `ARG[:LINE[:COLUMN]]: at PATH: MESSAGE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadInput {
    /// The argument the error is about (`answer`, `chunks`, `requests`, …).
    pub source: String,
    /// 1-based line within the argument's JSON text (or, for a batch, the
    /// 1-based position of the item), when known.
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

    /// A core [`InputError`] about `source` (an empty path is the whole input).
    pub fn from_core(source: &str, e: InputError) -> BadInput {
        BadInput {
            path: (!e.path.is_empty()).then_some(e.path),
            ..BadInput::new(source, e.message)
        }
    }
}

impl std::fmt::Display for BadInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
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

/// Why a call produced no contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The input cannot be used (the CLI's exit code 2).
    BadInput(BadInput),
    /// No citation could be extracted from a prose answer (exit code 3).
    CitationFormat(CitationFormatError),
}

impl From<BadInput> for Failure {
    fn from(e: BadInput) -> Failure {
        Failure::BadInput(e)
    }
}

/// JSON text as UTF-8: `str` arguments arrive as UTF-8 already; `bytes`
/// are checked here.
pub fn utf8<'a>(source: &str, bytes: &'a [u8]) -> Result<&'a str, BadInput> {
    std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        BadInput {
            line: Some(line),
            ..BadInput::new(source, format!("is not valid UTF-8 (byte offset {at})"))
        }
    })
}

/// Parses one JSON document into `T`, refusing trailing content; errors
/// carry the line and column within `text` and the JSON path (the CLI's
/// `parse_json`).
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

/// Parses chunks (a JSON array of chunk objects) and validates them as a
/// set: unique, header-safe IDs. Paths are relative to the array
/// (`[1].chunk_id`), as the CLI reports them.
pub fn parse_chunks(source: &str, text: &str) -> Result<ChunkSet, BadInput> {
    if text.trim().is_empty() {
        return Err(BadInput::new(
            source,
            "is empty; expected a JSON array of chunks",
        ));
    }
    let chunks: Vec<Chunk> = parse_json(source, text)?;
    ChunkSet::new(chunks).map_err(|e| BadInput::from_core(source, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use groundcite_core::GroundedAnswer;

    #[test]
    fn errors_name_the_argument_line_column_and_path() {
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
    fn chunk_sets_are_validated_with_paths() {
        let e = parse_chunks(
            "chunks",
            r#"[{"chunk_id": "a", "content": "x"}, {"chunk_id": "a", "content": "y"}]"#,
        )
        .unwrap_err();
        assert_eq!(e.path.as_deref(), Some("[1].chunk_id"));
        assert!(e.message.starts_with("duplicate chunk_id"), "{e}");
        assert!(parse_chunks("chunks", " \n").is_err());
        let e = parse_chunks("chunks", r#"[{"chunk_id": "a", "content": "\ud800"}]"#).unwrap_err();
        assert_eq!(e.path.as_deref(), Some("[0].content"));
    }

    #[test]
    fn bytes_must_be_utf8() {
        let e = utf8("answer", b"{\n\"a\": \"\xff\"}").unwrap_err();
        assert_eq!(
            e.to_string(),
            "answer:2: is not valid UTF-8 (byte offset 8)"
        );
        assert_eq!(utf8("answer", b"{}"), Ok("{}"));
    }
}
