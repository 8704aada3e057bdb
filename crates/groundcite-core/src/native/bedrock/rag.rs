//! RetrieveAndGenerate (Knowledge Bases): cited response parts, their
//! spans checked against the answer, references matched to chunks by the
//! chunk-ID metadata or by content.

use serde_json::Value;

use crate::contract::{Contract, Provenance, RefusalCode, Warning, WarningCode};
use crate::error::InputError;
use crate::model::ChunkSet;
use crate::normalize::{MatchProfile, QuoteVerdict, Span, find_quote};
use crate::text::truncate_chars;
use crate::verify::ClaimPolicy;

use crate::native::builder::{Builder, covers};
use crate::native::json::{get, get_index, get_str, opt_array};
use crate::native::layout::SourceLayout;
use crate::native::warnings::{refused, warning};

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
            get_index(s, "start", &format!("{path}.span"))?,
            get_index(s, "end", &format!("{path}.span"))?,
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
