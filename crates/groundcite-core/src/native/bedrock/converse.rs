//! Converse: `citationsContent` blocks, each a claim, whose document or
//! search-result locations are checked as for Anthropic.

use serde_json::Value;

use crate::contract::{Contract, Provenance, RefusalCode, Warning, WarningCode};
use crate::error::InputError;
use crate::model::ChunkSet;
use crate::normalize::MatchProfile;
use crate::verify::ClaimPolicy;

use crate::native::builder::{Builder, Location, NativeCitation, Pending};
use crate::native::json::{get, get_array, get_index, get_str, opt_array};
use crate::native::layout::{SourceKind, SourceLayout};
use crate::native::warnings::{refused, warning};

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
        Ok((get_index(v, "start", p)?, get_index(v, "end", p)?))
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
            index: get_index(v, "documentIndex", &p)?,
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
            index: get_index(v, "searchResultIndex", &p)?,
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
