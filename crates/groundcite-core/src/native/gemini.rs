//! Google Gemini (Gemini API and Vertex AI) `generateContent` responses
//! grounded by a retrieval tool: `candidates[0].groundingMetadata`.
//!
//! - The answer is `candidates[0].content.parts[].text` (parts marked
//!   `thought: true` are not answer text).
//! - Each `groundingSupports[]` entry with at least one
//!   `groundingChunkIndices` value is a claim. Its `segment {partIndex,
//!   startIndex, endIndex, text}` is an output span in **UTF-8 bytes** of
//!   part `partIndex` (default 0; `startIndex` is omitted when 0, as proto3
//!   JSON omits defaults), end exclusive. The span is read on byte
//!   boundaries (an offset inside a character reads nothing) and checked
//!   against `segment.text`; a span that misses it is `span_out_of_range`,
//!   and the claim is kept only when its text occurs in the answer.
//! - `groundingChunkIndices` index `groundingChunks[]`. A `retrievedContext
//!   {uri, title, text}` maps to the caller's chunks: the chunks whose
//!   `source_url` (or `chunk_id`) is `uri`; when `text` is given, the one of
//!   them (or of all chunks, when no chunk has the URI) whose content equals
//!   or holds `text`; without `text`, the URI must name exactly one chunk.
//!   Otherwise `unmatched_reference`. A grounding chunk gives no source
//!   quote, so each mapped chunk is cited as a reference (`match:
//!   "reference"`): the quantity check runs against the chunk's text.
//! - `web` (Google Search grounding) and other grounding chunks name no
//!   caller chunk: `unsupported_citation` (unverifiable), dropped. An index
//!   beyond `groundingChunks` is `source_index_out_of_range`.
//! - `promptFeedback.blockReason` or a safety/recitation `finishReason` is
//!   refused as R4; an `error` object as R3. `modelVersion` is the model
//!   when the caller gave none.

use serde_json::Value;

use crate::contract::{Contract, Provenance, RefusalCode, WarningCode};
use crate::error::InputError;
use crate::model::ChunkSet;
use crate::normalize::MatchProfile;
use crate::text::truncate_chars;
use crate::verify::ClaimPolicy;

use super::builder::Builder;
use super::chunk_match::{by_text, by_uri};
use super::json::{get, get_index, opt_array};
use super::layout::SourceLayout;
use super::output_span::{OffsetUnit, OutputSpan, claim_text};
use super::warnings::{refused, warning};

/// `finishReason` values that mean the candidate was withheld.
const BLOCKED: &[&str] = &[
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
];

/// A grounding chunk, parsed.
enum Grounding<'v> {
    Retrieved {
        uri: Option<&'v str>,
        text: Option<&'v str>,
    },
    /// Web search, Maps and any other kind: no caller chunk.
    Other(String),
}

/// Converts a `generateContent` response into contract v1 under the claim
/// `policy`.
pub fn convert(
    response: &Value,
    chunks: &ChunkSet,
    profile: MatchProfile,
    policy: ClaimPolicy,
    mut provenance: Provenance,
) -> Result<Contract, InputError> {
    if !response.is_object() {
        return Err(InputError::new(
            "",
            "expected a Gemini generateContent response object",
        ));
    }
    if provenance.model.is_none() {
        provenance.model = response
            .get("modelVersion")
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    if response.get("error").is_some_and(Value::is_object) {
        return Ok(refused(RefusalCode::R3, provenance, profile));
    }
    if response
        .get("promptFeedback")
        .and_then(|p| p.get("blockReason"))
        .is_some_and(|r| !r.is_null())
    {
        return Ok(refused(RefusalCode::R4, provenance, profile));
    }
    let layout = SourceLayout::one_per_chunk(chunks);
    let mut b = Builder::new(chunks, &layout, profile, policy);
    let candidates = opt_array(response, "candidates", "")?;
    let Some(candidate) = candidates.first() else {
        return Ok(b.finish_text(0, "", provenance));
    };
    let path = ".candidates[0]";
    if candidate
        .get("finishReason")
        .and_then(Value::as_str)
        .is_some_and(|r| BLOCKED.contains(&r))
    {
        return Ok(refused(RefusalCode::R4, provenance, profile));
    }
    let parts = match candidate.get("content") {
        None | Some(Value::Null) => &[][..],
        Some(c) => opt_array(c, "parts", &format!("{path}.content"))?,
    };
    let mut texts: Vec<&str> = Vec::with_capacity(parts.len());
    for (pi, p) in parts.iter().enumerate() {
        let t = match p.get("text") {
            None | Some(Value::Null) => "",
            Some(Value::String(s)) => s.as_str(),
            Some(_) => {
                return Err(InputError::new(
                    format!("{path}.content.parts[{pi}].text"),
                    "expected a string",
                ));
            }
        };
        let thought = p.get("thought").and_then(Value::as_bool) == Some(true);
        texts.push(if thought { "" } else { t });
    }
    let whole: String = texts.concat();
    let text_chars = whole.trim().chars().count();
    let (grounding, supports) = match candidate.get("groundingMetadata") {
        None | Some(Value::Null) => (Vec::new(), &[][..]),
        Some(m) => {
            let mpath = format!("{path}.groundingMetadata");
            let raw = opt_array(m, "groundingChunks", &mpath)?;
            let mut grounding = Vec::with_capacity(raw.len());
            for (gi, g) in raw.iter().enumerate() {
                grounding.push(parse_grounding(
                    g,
                    &format!("{mpath}.groundingChunks[{gi}]"),
                )?);
            }
            (grounding, opt_array(m, "groundingSupports", &mpath)?)
        }
    };
    for (si, s) in supports.iter().enumerate() {
        let spath = format!("{path}.groundingMetadata.groundingSupports[{si}]");
        let indices = opt_array(s, "groundingChunkIndices", &spath)?;
        if indices.is_empty() {
            continue;
        }
        let mut parsed = Vec::with_capacity(indices.len());
        for (k, v) in indices.iter().enumerate() {
            parsed.push(
                v.as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or_else(|| {
                        InputError::new(
                            format!("{spath}.groundingChunkIndices[{k}]"),
                            "expected a non-negative integer",
                        )
                    })?,
            );
        }
        let segment = get(s, "segment", &spath)?;
        let gpath = format!("{spath}.segment");
        let span = parse_segment(segment, &gpath)?;
        let index = b.next_index();
        let part_text = texts.get(span.part).copied().unwrap_or("");
        let Some(claim) = claim_text(
            &mut b,
            index,
            part_text,
            &whole,
            &OutputSpan {
                range: span.range,
                stated: span.text,
                unit: OffsetUnit::Utf8Bytes,
            },
            profile,
        ) else {
            continue;
        };
        let mut refs: Vec<(String, Option<String>)> = Vec::new();
        for (ci, &gi) in parsed.iter().enumerate() {
            let Some(g) = grounding.get(gi) else {
                b.warn(warning(
                    WarningCode::SourceIndexOutOfRange,
                    Some(index),
                    Some(ci),
                    None,
                    format!(
                        "Citation {ci} of claim {index} names grounding chunk {gi} but the response has {} grounding chunk(s); it was dropped.",
                        grounding.len()
                    ),
                ));
                continue;
            };
            match resolve(chunks, g, profile) {
                Ok(p) => refs.push((chunks.chunks()[p].chunk_id.clone(), None)),
                Err((code, why)) => b.warn(warning(
                    code,
                    Some(index),
                    Some(ci),
                    None,
                    format!("Citation {ci} of claim {index} (grounding chunk {gi}): {why}; it was dropped."),
                )),
            }
        }
        b.submit(index, &claim, &refs, parsed.len());
    }
    Ok(b.finish_text(
        text_chars,
        "no grounding support; was a retrieval tool (Vertex AI Search, RAG Engine, File Search) used?",
        provenance,
    ))
}

fn parse_grounding<'v>(g: &'v Value, path: &str) -> Result<Grounding<'v>, InputError> {
    if !g.is_object() {
        return Err(InputError::new(path, "expected a grounding chunk object"));
    }
    let Some(rc) = g.get("retrievedContext").filter(|v| !v.is_null()) else {
        let kind = g
            .as_object()
            .and_then(|o| o.keys().next().cloned())
            .unwrap_or_else(|| "empty".into());
        return Ok(Grounding::Other(kind));
    };
    let rpath = format!("{path}.retrievedContext");
    let opt_str = |key: &str| -> Result<Option<&'v str>, InputError> {
        match rc.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(_) => Err(InputError::new(
                format!("{rpath}.{key}"),
                "expected a string",
            )),
        }
    };
    Ok(Grounding::Retrieved {
        uri: opt_str("uri")?,
        text: opt_str("text")?,
    })
}

struct Segment<'v> {
    part: usize,
    range: Option<(usize, usize)>,
    text: Option<&'v str>,
}

fn parse_segment<'v>(s: &'v Value, path: &str) -> Result<Segment<'v>, InputError> {
    if !s.is_object() {
        return Err(InputError::new(path, "expected a segment object"));
    }
    let opt_index = |key: &str| -> Result<Option<usize>, InputError> {
        match s.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(_) => get_index(s, key, path).map(Some),
        }
    };
    let part = opt_index("partIndex")?.unwrap_or(0);
    let start = opt_index("startIndex")?.unwrap_or(0);
    let end = opt_index("endIndex")?;
    let text = match s.get("text") {
        None | Some(Value::Null) => None,
        Some(Value::String(t)) => Some(t.as_str()),
        Some(_) => return Err(InputError::new(format!("{path}.text"), "expected a string")),
    };
    Ok(Segment {
        part,
        range: end.map(|e| (start, e)),
        text,
    })
}

/// The chunk a grounding chunk names, or the warning code and why not.
fn resolve(
    chunks: &ChunkSet,
    g: &Grounding<'_>,
    profile: MatchProfile,
) -> Result<usize, (WarningCode, String)> {
    let (uri, text) = match g {
        Grounding::Other(kind) => {
            return Err((
                WarningCode::UnsupportedCitation,
                format!(
                    "a {kind:?} grounding chunk (web search or other grounding) names no supplied chunk and cannot be verified"
                ),
            ));
        }
        Grounding::Retrieved { uri, text } => (*uri, *text),
    };
    let unmatched = |why: String| (WarningCode::UnmatchedReference, why);
    let by_url = uri.map(|u| by_uri(chunks, u)).unwrap_or_default();
    match (text, by_url.len()) {
        (Some(t), 0) => by_text(chunks, t, None, profile).map_err(|why| {
            unmatched(match uri {
                Some(u) => format!("no chunk has the URI {u:?} and {why}"),
                None => why,
            })
        }),
        (Some(t), _) => by_text(chunks, t, Some(&by_url), profile).map_err(|why| {
            unmatched(format!(
                "{} chunk(s) have the URI {:?} but {why}",
                by_url.len(),
                uri.unwrap_or_default()
            ))
        }),
        (None, 1) => Ok(by_url[0]),
        (None, 0) => Err(unmatched(match uri {
            Some(u) => format!(
                "it has no text and no chunk has the URI {:?}",
                truncate_chars(u, 200)
            ),
            None => "it has neither a URI nor text".into(),
        })),
        (None, n) => Err(unmatched(format!(
            "it has no text and {n} chunks have the URI {:?}, so none was picked",
            uri.unwrap_or_default()
        ))),
    }
}
