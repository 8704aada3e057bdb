//! Hostile input to typed values: JSON text parsed with the CLI's rules
//! (`groundcite_core::json`: one document, trailing content refused, errors
//! with line, column and JSON path), and the failures the Python layer
//! raises.

use groundcite_core::prose::CitationFormatError;
use groundcite_core::{Chunk, ChunkSet};

pub use groundcite_core::json::{BadInput, parse_json, utf8};

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
}
