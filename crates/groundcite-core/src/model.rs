//! The data that crosses groundcite's boundary: retrieved chunks in, the
//! model's structured answer in.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::error::InputError;

/// One retrieved chunk, as an upstream retriever returns it.
///
/// Unknown fields are ignored: retrievers attach their own metadata and
/// groundcite passes through only what the contract names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    /// Identifier minted by the retriever; unique within one request.
    pub chunk_id: String,
    /// The chunk's text, exactly as shown to the model.
    pub content: String,
    /// Title of the source document, if known.
    #[serde(default)]
    pub source_title: Option<String>,
    /// Link to the source document, if known. Only http(s) reaches the contract.
    #[serde(default)]
    pub source_url: Option<String>,
    /// Page of the source document, if paged.
    #[serde(default)]
    pub page_number: Option<u32>,
    /// The retriever's relevance score, passed through untouched.
    #[serde(default)]
    pub score: Option<f64>,
}

/// One citation in the model's answer: a chunk and a verbatim quote from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Citation {
    /// The cited chunk's ID; must be one of the retrieved IDs.
    pub chunk_id: String,
    /// Text the model claims appears in that chunk.
    pub quote: String,
}

/// One claim in the model's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// The claim as the user will read it.
    pub text: String,
    /// The citations that support it.
    pub citations: Vec<Citation>,
}

/// The model's structured answer: the shape of the seed's `GroundedAnswer`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroundedAnswer {
    /// Whether the model believes the sources answer the question.
    pub answerable: bool,
    /// The claims, in the model's order.
    pub claims: Vec<Claim>,
}

/// Longest chunk ID accepted (IDs are echoed into prompts and headers).
pub const MAX_CHUNK_ID_LEN: usize = 512;

/// The retrieved chunks of one request, validated: IDs unique, non-empty,
/// free of control characters and surrounding white space, so that each can
/// stand unambiguously in a `[chunk_id: …]` header.
#[derive(Debug, Clone)]
pub struct ChunkSet {
    chunks: Vec<Chunk>,
    by_id: HashMap<String, usize>,
}

impl ChunkSet {
    /// Validates `chunks`; the error's path names the offending element.
    pub fn new(chunks: Vec<Chunk>) -> Result<ChunkSet, InputError> {
        let mut by_id = HashMap::with_capacity(chunks.len());
        for (i, c) in chunks.iter().enumerate() {
            validate_chunk_id(&c.chunk_id)
                .map_err(|why| InputError::new(format!("[{i}].chunk_id"), why))?;
            if let Some(first) = by_id.insert(c.chunk_id.clone(), i) {
                return Err(InputError::new(
                    format!("[{i}].chunk_id"),
                    format!(
                        "duplicate chunk_id {:?}: chunks [{first}] and [{i}] share it; chunk IDs must be unique within one request",
                        c.chunk_id
                    ),
                ));
            }
        }
        Ok(ChunkSet { chunks, by_id })
    }

    /// The chunks in the order they were given (the order shown to the model).
    pub fn chunks(&self) -> &[Chunk] {
        &self.chunks
    }

    /// Position of the chunk with this exact ID.
    pub fn position(&self, chunk_id: &str) -> Option<usize> {
        self.by_id.get(chunk_id).copied()
    }

    /// The chunk with this exact ID.
    pub fn get(&self, chunk_id: &str) -> Option<&Chunk> {
        self.position(chunk_id).map(|i| &self.chunks[i])
    }

    /// Number of chunks.
    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    /// Whether no chunk was retrieved.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }
}

fn validate_chunk_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        return Err("chunk_id is empty".into());
    }
    if id.len() > MAX_CHUNK_ID_LEN {
        return Err(format!(
            "chunk_id is {} bytes long; at most {MAX_CHUNK_ID_LEN} are accepted",
            id.len()
        ));
    }
    if id.chars().any(char::is_control) {
        return Err(format!("chunk_id {id:?} contains a control character"));
    }
    if id.trim() != id {
        return Err(format!(
            "chunk_id {id:?} starts or ends with white space, which a model cannot reproduce reliably"
        ));
    }
    Ok(())
}
