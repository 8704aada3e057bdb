//! Cohere Chat API v2 responses with RAG citations
//! (`message.citations[]`).
//!
//! - The answer is `message.content[]`'s `text` items.
//! - Each citation with at least one source is a claim: `start`, `end` are
//!   offsets in **Unicode code points** of the text item `content_index`
//!   (default: the first text item), end exclusive, as Cohere documents
//!   ("the citation starts at 'w', which is the seventh character") and its
//!   examples slice (`text[start:end]` in Python). The span is checked
//!   against the citation's `text`: a span that misses it is
//!   `span_out_of_range`, and the claim is kept only when its text occurs
//!   in the answer. Citations of `THINKING_CONTENT` or `PLAN` are not
//!   claims about the answer and are skipped.
//! - A source maps to a chunk by its `id` (or `document.id`) equal to a
//!   `chunk_id` (send chunks as documents with `id: chunk_id`); else by a
//!   string field of `document` (its text) that equals or is found in one
//!   chunk; else by Cohere's generated `doc:N` ID (document *N* of the
//!   request: chunk *N*, the chunks being the documents in the order sent).
//!   Otherwise `unmatched_reference`. `tool` sources whose ID is no chunk
//!   are `unsupported_citation`. A citation's span is output text, not a
//!   source quote, so each mapped chunk is cited as a reference: the
//!   quantity check runs against the chunk's text.
//! - `finish_reason: "ERROR"` is refused as R3.

use serde_json::Value;

use crate::contract::{Contract, Provenance, RefusalCode, WarningCode};
use crate::error::InputError;
use crate::model::ChunkSet;
use crate::normalize::MatchProfile;
use crate::verify::ClaimPolicy;

use super::builder::Builder;
use super::chunk_match::{by_id, by_text};
use super::json::{get, get_index, opt_array};
use super::layout::SourceLayout;
use super::output_span::{OffsetUnit, OutputSpan, claim_text};
use super::warnings::{refused, warning};

/// Converts a Chat v2 response into contract v1 under the claim `policy`.
pub fn convert(
    response: &Value,
    chunks: &ChunkSet,
    profile: MatchProfile,
    policy: ClaimPolicy,
    provenance: Provenance,
) -> Result<Contract, InputError> {
    if !response.is_object() {
        return Err(InputError::new(
            "",
            "expected a Cohere Chat (v2) response object",
        ));
    }
    if response.get("finish_reason").and_then(Value::as_str) == Some("ERROR") {
        return Ok(refused(RefusalCode::R3, provenance, profile));
    }
    let message = get(response, "message", "")?;
    if !message.is_object() {
        return Err(InputError::new(".message", "expected an object"));
    }
    let content = opt_array(message, "content", ".message")?;
    // Text of each content item (empty for other kinds), as the offsets count.
    let mut texts: Vec<Option<&str>> = Vec::with_capacity(content.len());
    for (k, item) in content.iter().enumerate() {
        let kind = item.get("type").and_then(Value::as_str);
        let text = match item.get("text") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.as_str()),
            Some(_) => {
                return Err(InputError::new(
                    format!(".message.content[{k}].text"),
                    "expected a string",
                ));
            }
        };
        texts.push(if matches!(kind, Some("text") | None) {
            text
        } else {
            None
        });
    }
    let first_text = texts.iter().position(Option::is_some);
    let whole: String = texts
        .iter()
        .flatten()
        .copied()
        .collect::<Vec<_>>()
        .join("\n");
    let layout = SourceLayout::one_per_chunk(chunks);
    let mut b = Builder::new(chunks, &layout, profile, policy);
    let citations = opt_array(message, "citations", ".message")?;
    for (k, c) in citations.iter().enumerate() {
        let path = format!(".message.citations[{k}]");
        if !c.is_object() {
            return Err(InputError::new(path, "expected a citation object"));
        }
        if matches!(
            c.get("type").and_then(Value::as_str),
            Some("THINKING_CONTENT" | "PLAN")
        ) {
            continue;
        }
        let sources = opt_array(c, "sources", &path)?;
        if sources.is_empty() {
            continue;
        }
        let opt_index = |key: &str| -> Result<Option<usize>, InputError> {
            match c.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(_) => get_index(c, key, &path).map(Some),
            }
        };
        let item = opt_index("content_index")?.or(first_text);
        let (start, end) = (opt_index("start")?, opt_index("end")?);
        let stated = match c.get("text") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.as_str()),
            Some(_) => return Err(InputError::new(format!("{path}.text"), "expected a string")),
        };
        // Sources are read before the claim, so a mistyped one is bad input
        // even when the claim is dropped.
        let mut resolved = Vec::with_capacity(sources.len());
        for (si, s) in sources.iter().enumerate() {
            resolved.push(resolve(
                chunks,
                s,
                &format!("{path}.sources[{si}]"),
                profile,
            )?);
        }
        let index = b.next_index();
        let text = item
            .and_then(|i| texts.get(i).copied().flatten())
            .unwrap_or("");
        let Some(claim) = claim_text(
            &mut b,
            index,
            text,
            &whole,
            &OutputSpan {
                range: start.zip(end),
                stated,
                unit: OffsetUnit::CodePoints,
            },
            profile,
        ) else {
            continue;
        };
        let mut refs: Vec<(String, Option<String>)> = Vec::new();
        for (si, r) in resolved.into_iter().enumerate() {
            match r {
                Ok(p) => refs.push((chunks.chunks()[p].chunk_id.clone(), None)),
                Err((code, why)) => b.warn(warning(
                    code,
                    Some(index),
                    Some(si),
                    None,
                    format!("Source {si} of claim {index}: {why}; it was dropped."),
                )),
            }
        }
        b.submit(index, &claim, &refs, sources.len());
    }
    Ok(b.finish_text(
        whole.trim().chars().count(),
        "no citation; were documents passed to the chat request?",
        provenance,
    ))
}

/// The chunk a citation source names, or the warning code and why not.
#[allow(clippy::type_complexity)]
fn resolve(
    chunks: &ChunkSet,
    s: &Value,
    path: &str,
    profile: MatchProfile,
) -> Result<Result<usize, (WarningCode, String)>, InputError> {
    if !s.is_object() {
        return Err(InputError::new(path, "expected a source object"));
    }
    let opt_str = |v: &Value, key: &str, at: &str| -> Result<Option<String>, InputError> {
        match v.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(x)) => Ok(Some(x.clone())),
            Some(_) => Err(InputError::new(format!("{at}.{key}"), "expected a string")),
        }
    };
    let id = opt_str(s, "id", path)?;
    let document = s.get("document").filter(|d| d.is_object());
    let doc_id = match document {
        Some(d) => opt_str(d, "id", &format!("{path}.document"))?,
        None => None,
    };
    for candidate in [&id, &doc_id].into_iter().flatten() {
        if let Some(p) = by_id(chunks, candidate) {
            return Ok(Ok(p));
        }
    }
    let kind = s.get("type").and_then(Value::as_str).unwrap_or("document");
    if kind != "document" {
        return Ok(Err((
            WarningCode::UnsupportedCitation,
            format!(
                "a {kind:?} source whose ID {:?} is no supplied chunk cannot be verified",
                id.as_deref().unwrap_or("")
            ),
        )));
    }
    // The document's text fields, longest first.
    let mut fields: Vec<(&str, &str)> = document
        .and_then(Value::as_object)
        .map(|o| {
            o.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "id" | "title" | "url"))
                .filter_map(|(k, v)| v.as_str().map(|t| (k.as_str(), t)))
                .collect()
        })
        .unwrap_or_default();
    fields.sort_by_key(|(_, t)| std::cmp::Reverse(t.len()));
    let mut why = Vec::new();
    for (key, text) in &fields {
        match by_text(chunks, text, None, profile) {
            Ok(p) => return Ok(Ok(p)),
            Err(w) => why.push(format!("document.{key}: {w}")),
        }
    }
    let generated = [&id, &doc_id]
        .into_iter()
        .flatten()
        .find_map(|i| i.strip_prefix("doc:").or_else(|| i.strip_prefix("doc_")))
        .and_then(|n| n.parse::<usize>().ok());
    if let Some(n) = generated {
        if n < chunks.len() && why.is_empty() {
            return Ok(Ok(n));
        }
        why.push(if n < chunks.len() {
            format!(
                "document {n} of the request is chunk {n}, but the document's text says otherwise"
            )
        } else {
            format!(
                "document {n} of the request is beyond the {} chunks given",
                chunks.len()
            )
        });
    }
    let named = id.or(doc_id).unwrap_or_default();
    Ok(Err((
        WarningCode::UnmatchedReference,
        if why.is_empty() {
            format!("its ID {named:?} is no supplied chunk and it carries no document text")
        } else {
            format!("its ID {named:?} is no supplied chunk ({})", why.join("; "))
        },
    )))
}
