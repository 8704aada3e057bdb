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

/// A sentence of a retrieved chunk that the embedded model may quote,
/// ranked by its relevance to the question (see `groundcite_ask`). The
/// model chooses among candidates instead of whole chunks, so what it
/// quotes is a sentence that was judged to answer, not merely a real one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The chunk that holds the sentence.
    pub chunk_id: String,
    /// The sentence, white space trimmed: an exact substring of the chunk.
    pub text: String,
    /// Byte offset of `text` in the chunk's content.
    pub start: usize,
    /// Where it sits: the document's title and the section headings above
    /// it, `" > "`-separated (shown to the model, never quoted).
    pub context: String,
    /// Relevance to the question (higher is better; comparable within one
    /// request only).
    pub score: f32,
    /// The answer must quote it: the ranker judged it to answer the question
    /// (or one of its parts), so the model only decides whether the
    /// question is answerable and whether to add the candidates after it.
    #[serde(default)]
    pub required: bool,
    /// What the sentence introduces, when it ends in a colon: the command,
    /// example or list right after it in the same chunk
    /// ([`crate::sentences::introduced_block`]). The claim quotes both, so
    /// "Use the lpstat(1) command to see a list of available printers:"
    /// comes with the command it announces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub introduces: Option<Introduced>,
}

/// The block a [`Candidate`] introduces: an exact substring of its chunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Introduced {
    /// Byte offset in the chunk's content.
    pub start: usize,
    /// The block, white space trimmed.
    pub text: String,
}

impl Candidate {
    /// The citations of the claim that quotes this candidate: the sentence,
    /// then the block it introduces, if any.
    pub fn citations(&self) -> Vec<Citation> {
        std::iter::once(&self.text)
            .chain(self.introduces.as_ref().map(|i| &i.text))
            .map(|quote| Citation {
                chunk_id: self.chunk_id.clone(),
                quote: quote.clone(),
            })
            .collect()
    }

    /// What that claim states ([`extractive_text`] of its citations).
    pub fn claim_text(&self) -> String {
        extractive_text(&self.citations())
    }
}

/// How the model's output spells its claims.
///
/// The seed's [`GroundedAnswer`] gives every claim its own `text`. An
/// extractive answer (the embedded model's default) states each claim as
/// the sentence it quotes, so the model writes the quote once and code
/// fills in the text: a claim object holds only `citations`, and its text is
/// its quotes joined by one space, every run of white space written as one
/// space ([`extractive_text`]). Re-verification of a stored trace applies
/// the same rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerForm {
    /// Every claim has `text` and `citations` (the seed's schema).
    #[default]
    Grounded,
    /// Claims have only `citations`; the text is filled from the quotes.
    Extractive,
}

impl AnswerForm {
    /// The name stored in traces (`grounded`, `extractive`).
    pub fn as_str(self) -> &'static str {
        match self {
            AnswerForm::Grounded => "grounded",
            AnswerForm::Extractive => "extractive",
        }
    }

    /// Parses a whole answer written in this form.
    pub fn parse_answer(self, json: &[u8]) -> Result<GroundedAnswer, serde_json::Error> {
        match self {
            AnswerForm::Grounded => serde_json::from_slice(json),
            AnswerForm::Extractive => {
                let a: ExtractiveAnswer = serde_json::from_slice(json)?;
                Ok(GroundedAnswer {
                    answerable: a.answerable,
                    claims: a.claims.into_iter().map(ExtractiveClaim::fill).collect(),
                })
            }
        }
    }

    /// Parses one claim object written in this form.
    pub fn parse_claim(self, json: &[u8]) -> Result<Claim, serde_json::Error> {
        match self {
            AnswerForm::Grounded => serde_json::from_slice(json),
            AnswerForm::Extractive => {
                serde_json::from_slice::<ExtractiveClaim>(json).map(ExtractiveClaim::fill)
            }
        }
    }
}

/// A name that is not an [`AnswerForm`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{given:?} is not grounded or extractive")]
pub struct ParseAnswerFormError {
    /// The name given.
    pub given: String,
}

impl std::str::FromStr for AnswerForm {
    type Err = ParseAnswerFormError;

    fn from_str(s: &str) -> Result<Self, ParseAnswerFormError> {
        match s {
            "grounded" => Ok(AnswerForm::Grounded),
            "extractive" => Ok(AnswerForm::Extractive),
            other => Err(ParseAnswerFormError {
                given: other.to_string(),
            }),
        }
    }
}

/// The text of an extractive claim: its quotes joined by a space, each run
/// of white space written as one space (a quote of a hard-wrapped sentence
/// holds its line breaks; the claim reads as one line).
pub fn extractive_text(citations: &[Citation]) -> String {
    let words: Vec<&str> = citations
        .iter()
        .flat_map(|c| c.quote.split_whitespace())
        .collect();
    words.join(" ")
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExtractiveClaim {
    citations: Vec<Citation>,
}

impl ExtractiveClaim {
    fn fill(self) -> Claim {
        Claim {
            text: extractive_text(&self.citations),
            citations: self.citations,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExtractiveAnswer {
    answerable: bool,
    claims: Vec<ExtractiveClaim>,
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
