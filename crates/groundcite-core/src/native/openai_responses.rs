//! OpenAI Responses API responses with file search (`file_citation`
//! annotations), Azure OpenAI's v1 Responses route included.
//!
//! - The answer is the `output_text` parts of `output[]`'s `message` items.
//! - A `file_citation` annotation carries `file_id`, `filename` and `index`:
//!   a position in the part's text (code points) where the citation stands,
//!   and no quote or span. The annotations at one index are one claim: the
//!   sentence that ends at the index (cut at the previous annotation's
//!   index when that is later), by the sentence rule of
//!   [`sentences`](crate::sentences::sentence_spans).
//! - Files map to chunks **through the search results**, never through file
//!   names: the `file_search_call` items of `output[]` carry `results[]`
//!   (`file_id`, `filename`, `score`, `text`, `attributes`) only when the
//!   request asked `include: ["file_search_call.results"]`. Each result of
//!   the cited file maps to a chunk by `attributes.chunk_id` equal to a
//!   `chunk_id`, else by its `text`, which must equal or be found in exactly
//!   one chunk; every chunk a cited file's results map to is cited. A
//!   response with file citations but no `results` in any file search call
//!   is bad input (the message says what to include); a cited file with no
//!   result, or results matching no chunk, is `unmatched_reference`.
//! - A file citation is a reference (no quote): the quantity check runs
//!   against the chunk's text. `url_citation` and `container_file_citation`
//!   annotations name no supplied chunk: `unsupported_citation`.
//! - A `refusal` content part, or `incomplete_details.reason:
//!   "content_filter"`, is refused as R4; `status: "failed"` or an `error`
//!   object as R3. The response's `model` is the model when the caller gave
//!   none.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::contract::{Contract, Provenance, RefusalCode, Warning, WarningCode};
use crate::error::InputError;
use crate::model::ChunkSet;
use crate::normalize::MatchProfile;
use crate::sentences::sentence_spans;
use crate::verify::ClaimPolicy;

use super::builder::Builder;
use super::chunk_match::{by_id, by_text};
use super::json::{get_array, get_index, get_str, opt_array};
use super::layout::SourceLayout;
use super::output_span::code_point_to_byte;
use super::warnings::{refused, warning};

/// The `include` value that makes a response carry its search results.
pub const INCLUDE_RESULTS: &str = "file_search_call.results";

/// One search result, as read.
struct SearchResult<'v> {
    file_id: &'v str,
    text: Option<&'v str>,
    chunk_id: Option<&'v str>,
}

/// An annotation at an index: a file citation, or a warning for one that
/// names no supplied chunk.
enum Entry<'v> {
    File {
        file_id: &'v str,
        filename: Option<&'v str>,
    },
    Unsupported(Warning),
}

/// Converts a Responses API response into contract v1 under the claim
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
            "expected an OpenAI Responses API response object",
        ));
    }
    if provenance.model.is_none() {
        provenance.model = response
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    if response.get("error").is_some_and(Value::is_object)
        || response.get("status").and_then(Value::as_str) == Some("failed")
    {
        return Ok(refused(RefusalCode::R3, provenance, profile));
    }
    if response
        .get("incomplete_details")
        .and_then(|d| d.get("reason"))
        .and_then(Value::as_str)
        == Some("content_filter")
    {
        return Ok(refused(RefusalCode::R4, provenance, profile));
    }
    let output = get_array(response, "output", "")?;
    let (results, calls, with_results) = read_results(output)?;
    // Every output_text part: (path, text, annotations grouped by index).
    let mut parts = Vec::new();
    let mut file_citations = 0usize;
    for (oi, item) in output.iter().enumerate() {
        if item.get("type").and_then(Value::as_str) != Some("message") {
            continue;
        }
        let path = format!(".output[{oi}]");
        for (ci, part) in opt_array(item, "content", &path)?.iter().enumerate() {
            let ppath = format!("{path}.content[{ci}]");
            match part.get("type").and_then(Value::as_str) {
                Some("refusal") => return Ok(refused(RefusalCode::R4, provenance, profile)),
                Some("output_text") => {}
                _ => continue,
            }
            let text = get_str(part, "text", &ppath)?;
            let groups = read_annotations(part, &ppath, &mut file_citations)?;
            parts.push((text, groups));
        }
    }
    if file_citations > 0 && with_results == 0 {
        return Err(InputError::new(
            ".output",
            format!(
                "the response has {file_citations} file_citation annotation(s) but {}: citations map to chunks through the search results, never through file names; send the request with include: [\"{INCLUDE_RESULTS}\"]",
                if calls == 0 {
                    "no file_search_call item".to_string()
                } else {
                    format!("no results in its {calls} file_search_call item(s)")
                }
            ),
        ));
    }
    let layout = SourceLayout::one_per_chunk(chunks);
    let mut b = Builder::new(chunks, &layout, profile, policy);
    let mut text_chars = 0;
    for (text, groups) in parts {
        text_chars += text.trim().chars().count();
        let spans = sentence_spans(text);
        let mut cut = 0;
        for (at, entries) in groups {
            let index = b.next_index();
            let Some(end) = code_point_to_byte(text, at) else {
                b.warn(warning(
                    WarningCode::SpanOutOfRange,
                    Some(index),
                    None,
                    None,
                    format!(
                        "The annotation index {at} of claim {index} lies beyond its text ({} characters); the claim was dropped.",
                        text.chars().count()
                    ),
                ));
                continue;
            };
            let sentence = spans.iter().rfind(|r| r.start < end).map_or(0, |r| r.start);
            let claim = text[sentence.max(cut).min(end)..end].trim();
            cut = end;
            let attempted = entries.len();
            let mut refs: Vec<(String, Option<String>)> = Vec::new();
            for (ci, e) in entries.into_iter().enumerate() {
                match e {
                    Entry::Unsupported(mut w) => {
                        w.claim_index = Some(index);
                        w.citation_index = Some(ci);
                        w.message = format!("Citation {ci} of claim {index}: {}", w.message);
                        b.warn(w);
                    }
                    Entry::File { file_id, filename } => {
                        match resolve(chunks, &results, file_id, profile) {
                            Ok(found) => {
                                for p in found {
                                    let id = &chunks.chunks()[p].chunk_id;
                                    if !refs.iter().any(|(r, _)| r == id) {
                                        refs.push((id.clone(), None));
                                    }
                                }
                            }
                            Err(why) => b.warn(warning(
                                WarningCode::UnmatchedReference,
                                Some(index),
                                Some(ci),
                                None,
                                format!(
                                    "Citation {ci} of claim {index} (file {file_id:?}{}): {why}; it was dropped.",
                                    filename.map(|f| format!(", {f:?}")).unwrap_or_default()
                                ),
                            )),
                        }
                    }
                }
            }
            b.submit(index, claim, &refs, attempted);
        }
    }
    Ok(b.finish_text(
        text_chars,
        "no file_citation annotation; was the file_search tool used?",
        provenance,
    ))
}

/// The search results of every `file_search_call`, the number of calls,
/// and how many of them carry a `results` array.
fn read_results(output: &[Value]) -> Result<(Vec<SearchResult<'_>>, usize, usize), InputError> {
    let mut results = Vec::new();
    let (mut calls, mut with_results) = (0, 0);
    for (oi, item) in output.iter().enumerate() {
        if item.get("type").and_then(Value::as_str) != Some("file_search_call") {
            continue;
        }
        calls += 1;
        let path = format!(".output[{oi}]");
        let Some(list) = item.get("results").filter(|r| !r.is_null()) else {
            continue;
        };
        let list = list
            .as_array()
            .ok_or_else(|| InputError::new(format!("{path}.results"), "expected an array"))?;
        with_results += 1;
        for (ri, r) in list.iter().enumerate() {
            let rpath = format!("{path}.results[{ri}]");
            let text = match r.get("text") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.as_str()),
                Some(_) => {
                    return Err(InputError::new(
                        format!("{rpath}.text"),
                        "expected a string",
                    ));
                }
            };
            results.push(SearchResult {
                file_id: get_str(r, "file_id", &rpath)?,
                text,
                chunk_id: r
                    .get("attributes")
                    .and_then(|a| a.get("chunk_id"))
                    .and_then(Value::as_str),
            });
        }
    }
    Ok((results, calls, with_results))
}

/// A part's annotations grouped by index, in index order (annotations at
/// one index in the order given); counts the file citations.
fn read_annotations<'v>(
    part: &'v Value,
    path: &str,
    file_citations: &mut usize,
) -> Result<BTreeMap<usize, Vec<Entry<'v>>>, InputError> {
    let mut groups: BTreeMap<usize, Vec<Entry<'v>>> = BTreeMap::new();
    for (ai, a) in opt_array(part, "annotations", path)?.iter().enumerate() {
        let apath = format!("{path}.annotations[{ai}]");
        if !a.is_object() {
            return Err(InputError::new(apath, "expected an annotation object"));
        }
        match a.get("type").and_then(Value::as_str) {
            Some("file_citation") => {
                let at = get_index(a, "index", &apath)?;
                let file_id = get_str(a, "file_id", &apath)?;
                let filename = a.get("filename").and_then(Value::as_str);
                *file_citations += 1;
                groups
                    .entry(at)
                    .or_default()
                    .push(Entry::File { file_id, filename });
            }
            Some(kind @ ("url_citation" | "container_file_citation")) => {
                let at = get_index(a, "end_index", &apath)?;
                groups.entry(at).or_default().push(Entry::Unsupported(warning(
                    WarningCode::UnsupportedCitation,
                    None,
                    None,
                    None,
                    format!(
                        "a {kind} annotation names no supplied chunk and cannot be verified; it was dropped."
                    ),
                )));
            }
            _ => {}
        }
    }
    Ok(groups)
}

/// The chunks a cited file's search results map to, or why none.
fn resolve(
    chunks: &ChunkSet,
    results: &[SearchResult<'_>],
    file_id: &str,
    profile: MatchProfile,
) -> Result<Vec<usize>, String> {
    let of_file: Vec<&SearchResult<'_>> = results.iter().filter(|r| r.file_id == file_id).collect();
    if of_file.is_empty() {
        return Err(format!(
            "the file is in none of the {} file search result(s)",
            results.len()
        ));
    }
    let mut found = Vec::new();
    let mut why = Vec::new();
    for (k, r) in of_file.iter().enumerate() {
        if let Some(p) = r.chunk_id.and_then(|id| by_id(chunks, id)) {
            found.push(p);
            continue;
        }
        match r.text {
            Some(t) => match by_text(chunks, t, None, profile) {
                Ok(p) => found.push(p),
                Err(w) => why.push(format!("result {k}: {w}")),
            },
            None => why.push(format!("result {k} has no text")),
        }
    }
    let mut seen = Vec::new();
    found.retain(|p| {
        let first = !seen.contains(p);
        seen.push(*p);
        first
    });
    if found.is_empty() {
        Err(format!(
            "its {} search result(s) match no supplied chunk ({})",
            of_file.len(),
            why.join("; ")
        ))
    } else {
        Ok(found)
    }
}
