//! Amazon Bedrock: RetrieveAndGenerate (Knowledge Bases) and Converse.
//!
//! # RetrieveAndGenerate
//! `output.text` is the answer; each `citations[]` entry pairs a
//! `generatedResponsePart.textResponsePart {text, span {start, end}}` with
//! `retrievedReferences[] {content.text, location, metadata}`. Each part
//! with at least one reference is a claim (its `text`). References map to
//! chunks by the `x-amz-bedrock-kb-chunk-id` metadata when present, else by
//! exact equality of `content.text` with a chunk's content (surrounding white
//! space ignored). The reference's `content.text` is then the quote checked
//! against the chunk with the matching rule, so a chunk re-indexed since
//! retrieval fails loudly. References that match no supplied chunk are
//! [`WarningCode::UnmatchedReference`]. The `span` is checked against the
//! answer (end exclusive, or inclusive): a span outside the answer, or not
//! covering the part's text, is [`WarningCode::SpanOutOfRange`]; the claim is
//! kept only if its text occurs in the answer. `guardrailAction:
//! "INTERVENED"` is refused as R4.
//!
//! # Converse
//! `output.message.content[]` holds `text` blocks and `citationsContent`
//! blocks (`content[{text}]`, `citations[{title, sourceContent[{text}],
//! location}]`). Each `citationsContent` block is a claim; `sourceContent`
//! joined is the cited text, and `location` is one of `documentChar`
//! (characters), `documentChunk` (content blocks), `documentPage` (pages),
//! `searchResultLocation` (search-result blocks), checked exactly as for
//! Anthropic (both end-index readings). `web` locations are unsupported.
//! `stopReason` `guardrail_intervened` or `content_filtered` is refused as R4.

use serde_json::Value;

use super::{
    Builder, Location, NativeCitation, Pending, SourceKind, SourceLayout, covers, get, get_array,
    get_str, opt_array, refused, warning,
};
use crate::contract::{Contract, Provenance, RefusalCode, Warning, WarningCode};
use crate::error::InputError;
use crate::model::ChunkSet;
use crate::normalize::{MatchProfile, QuoteVerdict, Span, find_quote};
use crate::text::truncate_chars;
use crate::verify::ClaimPolicy;

/// The metadata key that names a Knowledge Base chunk.
pub const KB_CHUNK_ID: &str = "x-amz-bedrock-kb-chunk-id";

/// Converts a RetrieveAndGenerate response into contract v1 under the claim
/// `policy` (see [`ClaimPolicy`]).
pub fn convert_retrieve_and_generate(
    response: &Value,
    chunks: &ChunkSet,
    profile: MatchProfile,
    policy: ClaimPolicy,
    provenance: Provenance,
) -> Result<Contract, InputError> {
    if !response.is_object() {
        return Err(InputError::new(
            "",
            "expected a RetrieveAndGenerate response object",
        ));
    }
    if response.get("guardrailAction").and_then(Value::as_str) == Some("INTERVENED") {
        return Ok(refused(RefusalCode::R4, provenance, profile));
    }
    let answer = get_str(get(response, "output", "")?, "text", ".output")?;
    let citations = opt_array(response, "citations", "")?;
    let layout = SourceLayout::one_per_chunk(chunks);
    let mut b = Builder::new(chunks, &layout, profile, policy);
    for (k, c) in citations.iter().enumerate() {
        let path = format!(".citations[{k}]");
        let refs = opt_array(c, "retrievedReferences", &path)?;
        if refs.is_empty() {
            continue;
        }
        let part = c
            .get("generatedResponsePart")
            .and_then(|g| g.get("textResponsePart"))
            .ok_or_else(|| {
                InputError::new(
                    format!("{path}.generatedResponsePart.textResponsePart"),
                    "missing",
                )
            })?;
        let ppath = format!("{path}.generatedResponsePart.textResponsePart");
        let index = b.next_index();
        let Some(text) = check_span(&mut b, answer, part, &ppath, index, profile)? else {
            continue;
        };
        let mut resolved: Vec<(String, Option<String>)> = Vec::new();
        for (ri, r) in refs.iter().enumerate() {
            match match_reference(chunks, r, &format!("{path}.retrievedReferences[{ri}]"))? {
                Ok((id, quote)) => resolved.push((id, quote)),
                Err(message) => b.warn(warning(
                    WarningCode::UnmatchedReference,
                    Some(index),
                    Some(ri),
                    None,
                    format!("Reference {ri} of claim {index}: {message}; it was dropped."),
                )),
            }
        }
        b.submit(index, &text, &resolved, refs.len());
    }
    Ok(b.finish_text(answer.trim().chars().count(), "no cited part.", provenance))
}

/// Checks a part's span against the answer; returns the claim text, or
/// `None` when the claim is dropped.
fn check_span(
    b: &mut Builder<'_>,
    answer: &str,
    part: &Value,
    path: &str,
    index: usize,
    profile: MatchProfile,
) -> Result<Option<String>, InputError> {
    let text = match part.get("text") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(_) => return Err(InputError::new(format!("{path}.text"), "expected a string")),
    };
    let span = match part.get("span") {
        None | Some(Value::Null) => None,
        Some(s) => Some((
            super::get_index(s, "start", &format!("{path}.span"))?,
            super::get_index(s, "end", &format!("{path}.span"))?,
        )),
    };
    let slice = |s: usize, e: usize| (s <= e).then(|| Span::new(s, e).slice(answer)).flatten();
    let (Some((start, end)), text) = (span, text) else {
        return Ok(match text {
            Some(t) => Some(t.to_string()),
            None => {
                b.warn(warning(
                    WarningCode::EmptyClaimText,
                    Some(index),
                    None,
                    None,
                    format!("Claim {index} has neither text nor span and was dropped."),
                ));
                None
            }
        });
    };
    let exclusive = slice(start, end);
    let inclusive = slice(start, end.saturating_add(1));
    let Some(text) = text else {
        // No text: the span is the claim.
        return Ok(match exclusive {
            Some(s) => Some(s.to_string()),
            None => {
                b.warn(span_warning(
                    index,
                    start,
                    end,
                    answer,
                    "lies outside the answer; the claim was dropped",
                ));
                None
            }
        });
    };
    let agrees = |s: Option<&str>| s.is_some_and(|s| covers(s, text, profile));
    if agrees(exclusive) || agrees(inclusive) {
        return Ok(Some(text.to_string()));
    }
    let in_answer = matches!(find_quote(answer, text, profile), QuoteVerdict::Found(_));
    let what = match (exclusive.is_some(), in_answer) {
        (false, true) => {
            "lies outside the answer; the part's text occurs in the answer, so the claim was kept"
        }
        (false, false) => {
            "lies outside the answer and the part's text is not in the answer; the claim was dropped"
        }
        (true, true) => {
            "does not cover the part's text; the text occurs elsewhere in the answer, so the claim was kept"
        }
        (true, false) => {
            "does not cover the part's text, which is not in the answer; the claim was dropped"
        }
    };
    b.warn(span_warning(index, start, end, answer, what));
    Ok(in_answer.then(|| text.to_string()))
}

fn span_warning(index: usize, start: usize, end: usize, answer: &str, what: &str) -> Warning {
    warning(
        WarningCode::SpanOutOfRange,
        Some(index),
        None,
        None,
        format!(
            "The span {start}..{end} of claim {index} {what} (the answer has {} characters).",
            answer.chars().count()
        ),
    )
}

/// Maps a retrieved reference to (chunk ID, quote), or says why not.
fn match_reference(
    chunks: &ChunkSet,
    r: &Value,
    path: &str,
) -> Result<Result<(String, Option<String>), String>, InputError> {
    let content = match r.get("content").and_then(|c| c.get("text")) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(_) => {
            return Err(InputError::new(
                format!("{path}.content.text"),
                "expected a string",
            ));
        }
    };
    let kb_id = r
        .get("metadata")
        .and_then(|m| m.get(KB_CHUNK_ID))
        .and_then(Value::as_str);
    let uri = location_uri(r);
    // An unknown KB chunk ID falls through to the content: IDs may have been re-minted.
    if let Some(id) = kb_id
        && chunks.position(id).is_some()
    {
        return Ok(Ok((id.to_string(), content.map(str::to_string))));
    }
    if let Some(text) = content {
        let hits: Vec<&str> = chunks
            .chunks()
            .iter()
            .filter(|c| c.content == text || c.content.trim() == text.trim())
            .map(|c| c.chunk_id.as_str())
            .collect();
        match hits.len() {
            1 => return Ok(Ok((hits[0].to_string(), Some(text.to_string())))),
            0 => {}
            n => {
                return Ok(Err(format!(
                    "its content equals {n} supplied chunks ({}), so none was picked",
                    hits.iter()
                        .map(|h| format!("{h:?}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
    }
    let mut why = String::from("it matches no supplied chunk");
    if let Some(id) = kb_id {
        why.push_str(&format!(" ({KB_CHUNK_ID} {id:?} was not supplied"));
        why.push_str(if content.is_some() {
            " and its content equals no chunk)"
        } else {
            ")"
        });
    } else if let Some(t) = content {
        why.push_str(&format!(
            " (no {KB_CHUNK_ID}; content {:?} equals no chunk)",
            truncate_chars(t, 80)
        ));
    }
    if let Some(u) = uri {
        why.push_str(&format!(", source {u}"));
    }
    Ok(Err(why))
}

/// The reference's location URI, for messages.
fn location_uri(r: &Value) -> Option<String> {
    let loc = r.get("location")?;
    for (key, field) in [
        ("s3Location", "uri"),
        ("webLocation", "url"),
        ("confluenceLocation", "url"),
        ("salesforceLocation", "url"),
        ("sharePointLocation", "url"),
        ("customDocumentLocation", "id"),
    ] {
        if let Some(v) = loc
            .get(key)
            .and_then(|l| l.get(field))
            .and_then(Value::as_str)
        {
            return Some(v.to_string());
        }
    }
    r.get("metadata")
        .and_then(|m| m.get("x-amz-bedrock-kb-source-uri"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// Converts a Converse response into contract v1 under the claim `policy`.
pub fn convert_converse(
    response: &Value,
    chunks: &ChunkSet,
    layout: &SourceLayout,
    profile: MatchProfile,
    policy: ClaimPolicy,
    provenance: Provenance,
) -> Result<Contract, InputError> {
    if !response.is_object() {
        return Err(InputError::new("", "expected a Converse response object"));
    }
    if matches!(
        response.get("stopReason").and_then(Value::as_str),
        Some("guardrail_intervened" | "content_filtered")
    ) {
        return Ok(refused(RefusalCode::R4, provenance, profile));
    }
    let message = get(get(response, "output", "")?, "message", ".output")?;
    let content = get_array(message, "content", ".output.message")?;
    let mut b = Builder::new(chunks, layout, profile, policy);
    let mut text_chars = 0;
    for (k, block) in content.iter().enumerate() {
        let path = format!(".output.message.content[{k}]");
        if let Some(t) = block.get("text").and_then(Value::as_str) {
            text_chars += t.trim().chars().count();
            continue;
        }
        let Some(cc) = block.get("citationsContent") else {
            continue;
        };
        let cpath = format!("{path}.citationsContent");
        let parts = opt_array(cc, "content", &cpath)?;
        let mut text = String::new();
        for (pi, p) in parts.iter().enumerate() {
            text.push_str(get_str(p, "text", &format!("{cpath}.content[{pi}]"))?);
        }
        text_chars += text.trim().chars().count();
        let citations = opt_array(cc, "citations", &cpath)?;
        if citations.is_empty() {
            continue;
        }
        let mut parsed = Vec::with_capacity(citations.len());
        for (ci, c) in citations.iter().enumerate() {
            parsed.push(parse_converse_citation(
                c,
                &format!("{cpath}.citations[{ci}]"),
            )?);
        }
        b.claim(Pending {
            text,
            citations: parsed,
        });
    }
    Ok(b.finish_text(
        text_chars,
        "no citation; were citations enabled on the documents?",
        provenance,
    ))
}

fn parse_converse_citation(
    c: &Value,
    path: &str,
) -> Result<Result<NativeCitation, Warning>, InputError> {
    let sources = opt_array(c, "sourceContent", path)?;
    let cited = if sources.is_empty() {
        None
    } else {
        let mut s = String::new();
        for (i, sc) in sources.iter().enumerate() {
            s.push_str(get_str(sc, "text", &format!("{path}.sourceContent[{i}]"))?);
        }
        Some(s)
    };
    let loc = get(c, "location", path)?;
    let lpath = format!("{path}.location");
    let range = |v: &Value, p: &str| -> Result<(usize, usize), InputError> {
        Ok((
            super::get_index(v, "start", p)?,
            super::get_index(v, "end", p)?,
        ))
    };
    let doc = |key: &str,
               label: &'static str,
               mk: fn(usize, usize) -> Location|
     -> Result<Option<NativeCitation>, InputError> {
        let Some(v) = loc.get(key) else {
            return Ok(None);
        };
        let p = format!("{lpath}.{key}");
        let (start, end) = range(v, &p)?;
        Ok(Some(NativeCitation {
            kind: SourceKind::Document,
            index: super::get_index(v, "documentIndex", &p)?,
            location: mk(start, end),
            cited_text: cited.clone(),
            label,
        }))
    };
    if let Some(n) = doc("documentChar", "documentChar", |start, end| {
        Location::Chars { start, end }
    })? {
        return Ok(Ok(n));
    }
    if let Some(n) = doc("documentChunk", "documentChunk", |start, end| {
        Location::Blocks { start, end }
    })? {
        return Ok(Ok(n));
    }
    if let Some(n) = doc("documentPage", "documentPage", |start, end| {
        Location::Pages { start, end }
    })? {
        return Ok(Ok(n));
    }
    if let Some(v) = loc.get("searchResultLocation") {
        let p = format!("{lpath}.searchResultLocation");
        let (start, end) = range(v, &p)?;
        return Ok(Ok(NativeCitation {
            kind: SourceKind::SearchResult,
            index: super::get_index(v, "searchResultIndex", &p)?,
            location: Location::Blocks { start, end },
            cited_text: cited,
            label: "searchResultLocation",
        }));
    }
    let kind = loc
        .as_object()
        .and_then(|o| o.keys().next().cloned())
        .unwrap_or_else(|| "empty".into());
    Ok(Err(warning(
        WarningCode::UnsupportedCitation,
        None,
        None,
        None,
        format!(
            "A citation with a {kind:?} location cannot be checked against the supplied chunks and was dropped."
        ),
    )))
}
