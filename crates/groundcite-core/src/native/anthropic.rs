//! Anthropic Messages API responses with native citations.
//!
//! Each `text` content block that carries a non-empty `citations` array is
//! one claim. Citations map to chunks through the [`SourceLayout`]:
//! `document_index` counts the `document` blocks of the request and
//! `search_result_index` its `search_result` blocks (also inside
//! `tool_result`), each in the order sent.
//!
//! | citation type | location | checked |
//! |---|---|---|
//! | `char_location` | `start_char_index`, `end_char_index`: code points, end exclusive (end inclusive also accepted) | the chunk's text there matches `cited_text` |
//! | `page_location` | `start_page_number`, `end_page_number`: 1-based, end exclusive (or inclusive) | the page's chunk holds `cited_text` |
//! | `content_block_location` | `start_block_index`, `end_block_index`: 0-based, end exclusive (or inclusive) | the blocks' chunks hold `cited_text` |
//! | `search_result_location` | `search_result_index`, `start_block_index`, `end_block_index` | as for content blocks |
//! | `web_search_result_location` and others | — | dropped: [`WarningCode::UnsupportedCitation`] |
//!
//! `cited_text` is always checked against the chunk with the matching rule.
//! A response with `stop_reason: "refusal"` is refused as R4; an `error`
//! object as R3. Streams ([`accumulate_stream`], [`parse_sse`]) produce the
//! same message as the non-streamed response, hence the same contract.

use serde_json::{Map, Value};

use crate::contract::{Contract, Provenance, RefusalCode, WarningCode};
use crate::error::InputError;
use crate::model::ChunkSet;
use crate::normalize::MatchProfile;
use crate::verify::ClaimPolicy;

use super::builder::{Builder, Location, NativeCitation, Pending};
use super::json::{get, get_array, get_index, get_str, opt_array};
use super::layout::{SourceKind, SourceLayout};
use super::warnings::{refused, warning};

/// Converts a Messages API response (one JSON object, `type: "message"`)
/// into contract v1 under the claim `policy` (see [`ClaimPolicy`]). When
/// `provenance.model` is `None`, the response's `model` is used.
pub fn convert(
    response: &Value,
    chunks: &ChunkSet,
    layout: &SourceLayout,
    profile: MatchProfile,
    policy: ClaimPolicy,
    mut provenance: Provenance,
) -> Result<Contract, InputError> {
    if !response.is_object() {
        return Err(InputError::new(
            "",
            "expected a Messages API response object",
        ));
    }
    if provenance.model.is_none() {
        provenance.model = response
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    match response.get("type").and_then(Value::as_str) {
        Some("error") => return Ok(refused(RefusalCode::R3, provenance, profile)),
        Some("message") | None => {}
        Some(other) => {
            return Err(InputError::new(
                ".type",
                format!("expected \"message\" (a Messages API response), found {other:?}"),
            ));
        }
    }
    if response.get("stop_reason").and_then(Value::as_str) == Some("refusal") {
        return Ok(refused(RefusalCode::R4, provenance, profile));
    }
    let content = get_array(response, "content", "")?;
    let mut b = Builder::new(chunks, layout, profile, policy);
    let mut text_chars = 0;
    for (k, block) in content.iter().enumerate() {
        let path = format!(".content[{k}]");
        if block.get("type").and_then(Value::as_str) != Some("text") {
            continue;
        }
        let text = get_str(block, "text", &path)?;
        text_chars += text.trim().chars().count();
        let citations = opt_array(block, "citations", &path)?;
        if citations.is_empty() {
            continue;
        }
        let mut parsed = Vec::with_capacity(citations.len());
        for (ci, c) in citations.iter().enumerate() {
            parsed.push(parse_citation(c, &format!("{path}.citations[{ci}]"))?);
        }
        b.claim(Pending {
            text: text.to_string(),
            citations: parsed,
        });
    }
    Ok(b.finish_text(
        text_chars,
        "no citation; were citations enabled on the documents?",
        provenance,
    ))
}

/// Parses one citation object; an unsupported type becomes a warning.
fn parse_citation(
    c: &Value,
    path: &str,
) -> Result<Result<NativeCitation, crate::Warning>, InputError> {
    let ty = get_str(c, "type", path)?;
    let cited = || -> Result<Option<String>, InputError> {
        Ok(Some(get_str(c, "cited_text", path)?.to_string()))
    };
    let doc = |label: &'static str, location: Location| -> Result<NativeCitation, InputError> {
        Ok(NativeCitation {
            kind: SourceKind::Document,
            index: get_index(c, "document_index", path)?,
            location,
            cited_text: cited()?,
            label,
        })
    };
    let n = |key: &str| get_index(c, key, path);
    let parsed = match ty {
        "char_location" => doc(
            "char_location",
            Location::Chars {
                start: n("start_char_index")?,
                end: n("end_char_index")?,
            },
        )?,
        "page_location" => doc(
            "page_location",
            Location::Pages {
                start: n("start_page_number")?,
                end: n("end_page_number")?,
            },
        )?,
        "content_block_location" => doc(
            "content_block_location",
            Location::Blocks {
                start: n("start_block_index")?,
                end: n("end_block_index")?,
            },
        )?,
        "search_result_location" => {
            // Block indices are absent from some SDK examples: the whole result then.
            let start = match c.get("start_block_index") {
                None | Some(Value::Null) => 0,
                Some(_) => n("start_block_index")?,
            };
            let end = match c.get("end_block_index") {
                None | Some(Value::Null) => start,
                Some(_) => n("end_block_index")?,
            };
            NativeCitation {
                kind: SourceKind::SearchResult,
                index: n("search_result_index")?,
                location: Location::Blocks { start, end },
                cited_text: cited()?,
                label: "search_result_location",
            }
        }
        other => {
            return Ok(Err(warning(
                WarningCode::UnsupportedCitation,
                None,
                None,
                None,
                format!(
                    "A {other:?} citation cannot be checked against the supplied chunks and was dropped."
                ),
            )));
        }
    };
    Ok(Ok(parsed))
}

/// Accumulates streaming events (`message_start`, `content_block_start`,
/// `content_block_delta` with `text_delta` / `citations_delta` /
/// `input_json_delta` / `thinking_delta` / `signature_delta`,
/// `content_block_stop`, `message_delta`, `message_stop`, `ping`) into the
/// message the non-streamed API would have returned. An `error` event
/// yields the error object.
pub fn accumulate_stream<'v>(
    events: impl IntoIterator<Item = &'v Value>,
) -> Result<Value, InputError> {
    let mut message: Option<Map<String, Value>> = None;
    let mut json_parts: Vec<(usize, String)> = Vec::new();
    for (i, ev) in events.into_iter().enumerate() {
        let path = format!("[{i}]");
        let ty = get_str(ev, "type", &path)?;
        match ty {
            "message_start" => {
                let m = get(ev, "message", &path)?
                    .as_object()
                    .ok_or_else(|| {
                        InputError::new(format!("{path}.message"), "expected an object")
                    })?
                    .clone();
                message = Some(m);
            }
            "ping" | "message_stop" => {}
            "error" => {
                return Ok(
                    serde_json::json!({"type": "error", "error": ev.get("error").cloned().unwrap_or(Value::Null)}),
                );
            }
            _ => {
                let m = message.as_mut().ok_or_else(|| {
                    InputError::new(&path, format!("{ty:?} before message_start"))
                })?;
                apply_event(m, ev, ty, &path, &mut json_parts)?;
            }
        }
    }
    let mut m =
        message.ok_or_else(|| InputError::new("", "the stream has no message_start event"))?;
    // Unfinished tool-input JSON stays a string rather than failing the answer.
    for (idx, s) in json_parts {
        if let Some(Value::Array(content)) = m.get_mut("content")
            && let Some(block) = content.get_mut(idx)
        {
            block["input"] = serde_json::from_str(&s).unwrap_or(Value::String(s));
        }
    }
    Ok(Value::Object(m))
}

fn apply_event(
    m: &mut Map<String, Value>,
    ev: &Value,
    ty: &str,
    path: &str,
    json_parts: &mut Vec<(usize, String)>,
) -> Result<(), InputError> {
    let content = m
        .entry("content")
        .or_insert_with(|| Value::Array(Vec::new()));
    let Value::Array(content) = content else {
        return Err(InputError::new(".message.content", "expected an array"));
    };
    match ty {
        "content_block_start" => {
            let idx = get_index(ev, "index", path)?;
            let block = get(ev, "content_block", path)?.clone();
            if idx > content.len() {
                return Err(InputError::new(
                    format!("{path}.index"),
                    format!("block {idx} starts before block {}", content.len()),
                ));
            }
            if idx == content.len() {
                content.push(block);
            } else {
                content[idx] = block;
            }
        }
        "content_block_delta" => {
            let idx = get_index(ev, "index", path)?;
            let block = content.get_mut(idx).ok_or_else(|| {
                InputError::new(
                    format!("{path}.index"),
                    format!("delta for block {idx}, which was not started"),
                )
            })?;
            let delta = get(ev, "delta", path)?;
            let dpath = format!("{path}.delta");
            match get_str(delta, "type", &dpath)? {
                "text_delta" => append(block, "text", get_str(delta, "text", &dpath)?),
                "thinking_delta" => append(block, "thinking", get_str(delta, "thinking", &dpath)?),
                "signature_delta" => {
                    block["signature"] =
                        Value::String(get_str(delta, "signature", &dpath)?.to_string());
                }
                "citations_delta" => {
                    let c = get(delta, "citation", &dpath)?.clone();
                    match block.get_mut("citations") {
                        Some(Value::Array(a)) => a.push(c),
                        _ => block["citations"] = Value::Array(vec![c]),
                    }
                }
                "input_json_delta" => {
                    let part = get_str(delta, "partial_json", &dpath)?;
                    match json_parts.iter_mut().find(|(i, _)| *i == idx) {
                        Some((_, s)) => s.push_str(part),
                        None => json_parts.push((idx, part.to_string())),
                    }
                }
                _ => {}
            }
        }
        "content_block_stop" => {}
        "message_delta" => {
            if let Some(delta) = ev.get("delta").and_then(Value::as_object) {
                for (k, v) in delta {
                    m.insert(k.clone(), v.clone());
                }
            }
            if let Some(u) = ev.get("usage") {
                m.insert("usage".into(), u.clone());
            }
        }
        _ => {}
    }
    Ok(())
}

fn append(block: &mut Value, key: &str, part: &str) {
    match block.get_mut(key) {
        Some(Value::String(s)) => s.push_str(part),
        _ => block[key] = Value::String(part.to_string()),
    }
}

/// Splits a Server-Sent Events body into its JSON `data` payloads (events
/// separated by blank lines; `event:`, `id:` and comment lines ignored;
/// multi-line data joined with newlines).
pub fn parse_sse(body: &str) -> Result<Vec<Value>, InputError> {
    let mut out = Vec::new();
    let mut data = String::new();
    // The line where the pending event's data starts, for error messages.
    let mut data_line = 0;
    let mut flush = |data: &mut String, line_no: usize| -> Result<(), InputError> {
        if data.is_empty() || data == "[DONE]" {
            data.clear();
            return Ok(());
        }
        let v: Value = serde_json::from_str(data).map_err(|e| {
            InputError::new(
                format!("line {line_no}"),
                format!("event data is not JSON: {e}"),
            )
        })?;
        out.push(v);
        data.clear();
        Ok(())
    };
    for (i, line) in body.lines().enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            flush(&mut data, data_line)?;
        } else if let Some(d) = line.strip_prefix("data:") {
            if data.is_empty() {
                data_line = i + 1;
            } else {
                data.push('\n');
            }
            data.push_str(d.strip_prefix(' ').unwrap_or(d));
        }
    }
    flush(&mut data, data_line)?;
    Ok(out)
}

/// Reads a response body in any of the forms a caller may have saved: one
/// Messages API object, an SSE stream, a JSON array of stream events, or
/// JSON Lines of stream events; streams are accumulated.
pub fn read_response(body: &str) -> Result<Value, InputError> {
    let t = body.trim_start_matches('\u{feff}').trim_start();
    if t.starts_with("event:") || t.starts_with("data:") || t.starts_with(':') {
        let events = parse_sse(t)?;
        return accumulate_stream(&events);
    }
    if t.starts_with('[') {
        let v: Value =
            serde_json::from_str(t).map_err(|e| InputError::new("", format!("not JSON: {e}")))?;
        let events = v.as_array().map(Vec::as_slice).unwrap_or_default();
        return accumulate_stream(events);
    }
    let mut stream = serde_json::Deserializer::from_str(t).into_iter::<Value>();
    let first = match stream.next() {
        Some(Ok(v)) => v,
        Some(Err(e)) => return Err(InputError::new("", format!("not JSON: {e}"))),
        None => return Err(InputError::new("", "empty response")),
    };
    let is_event = first
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|ty| ty == "message_start" || ty == "ping");
    if !is_event {
        if stream.next().is_some() {
            return Err(InputError::new(
                "",
                "trailing content after the response object",
            ));
        }
        return Ok(first);
    }
    let mut events = vec![first];
    for v in stream {
        events.push(v.map_err(|e| {
            InputError::new(format!("[{}]", events.len()), format!("not JSON: {e}"))
        })?);
    }
    accumulate_stream(&events)
}
