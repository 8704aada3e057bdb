//! Re-verification of a stored trace with the same rule (the incident
//! runbook's first step), shared by `groundcite trace verify` and the
//! service's `POST /v1/traces/{id}/verify`.

use groundcite_core::native::{self, NativeFormat};
use groundcite_core::{
    AnswerForm, Chunk, ChunkSet, ClaimPolicy, Contract, GroundedAnswer, MatchProfile, Provenance,
    RefusalCode, prose, verify_with,
};

use crate::record::TraceRecord;
use crate::text::JsonText;

/// The outcome of [`reverify`].
#[derive(Debug, Clone)]
pub struct Reverified {
    /// The contract verification gives today.
    pub contract: Contract,
    /// Whether it equals the stored contract exactly.
    pub same: bool,
    /// Why the stored output was refused (R3), when it was.
    pub note: Option<String>,
}

/// Why [`reverify`] could not re-verify a trace, as a sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReverifyError {
    /// A chat completion: nothing to re-verify.
    #[error("a chat completion has no chunks and no contract: there is nothing to re-verify")]
    Chat,
    /// One of the trace's own fields (chunks, match profile, claim policy,
    /// answer form or native format) does not read as its type; the
    /// message names it.
    #[error("{0}")]
    Unusable(String),
    /// The stored output (prose, or a provider's response) cannot be read
    /// as what the trace says it is.
    #[error("{0}")]
    Output(String),
}

/// How a trace's raw output is read back: the path that produced it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Channel {
    /// A `GroundedAnswer` (structured output), in its answer form.
    Answer(AnswerForm),
    /// Free-form prose with citation markers (`POST /v1/parse`).
    Prose,
    /// A provider's native citations (`POST /v1/convert`, or an answer from
    /// a native-citation provider).
    Native(NativeFormat),
}

/// The channel of `record`: its `answer_form` when set (`grounded`,
/// `extractive`, `prose`, or a native format's name), else its kind
/// (`parse` is prose, `convert` names its format in its options), else a
/// grounded answer.
fn channel(record: &TraceRecord) -> Result<Channel, ReverifyError> {
    let native = |name: &str| -> Result<NativeFormat, ReverifyError> {
        serde_json::from_value(serde_json::Value::String(name.to_string())).map_err(|_| {
            ReverifyError::Unusable(format!("the trace's native format {name:?} is unknown"))
        })
    };
    if let Some(form) = record.answer_form.as_deref() {
        return match form {
            "prose" => Ok(Channel::Prose),
            "anthropic" | "bedrock-converse" | "bedrock-rag" | "gemini" | "cohere"
            | "openai-responses" => native(form).map(Channel::Native),
            other => other
                .parse()
                .map(Channel::Answer)
                .map_err(|e| ReverifyError::Unusable(format!("the trace's answer form: {e}"))),
        };
    }
    match record.kind.as_str() {
        "parse" => Ok(Channel::Prose),
        "convert" => match record.options.from.as_deref() {
            Some(f) => native(f).map(Channel::Native),
            None => Err(ReverifyError::Unusable(
                "the convert trace names no format (options.from)".into(),
            )),
        },
        _ => Ok(Channel::Answer(AnswerForm::default())),
    }
}

/// Re-runs verification on the stored raw output against the stored chunks
/// with the stored matching profile and claim policy, by the path that
/// produced the trace: a structured answer in its form, prose with
/// citation markers, or a provider's native citations (with the stored
/// request, when there was one).
///
/// A trace without raw output (a gate's refusal) re-verifies "no answer";
/// a generation that stopped before its end (truncated, refused, filtered,
/// failed: the stored stop reason) re-verifies to the same refusal, without
/// reading its partial output as an answer. Errors: a chat completion (no
/// chunks, no contract), or the trace's own fields are unusable (chunks,
/// profile, policy or form that do not parse), as a sentence.
pub fn reverify(record: &TraceRecord) -> Result<Reverified, ReverifyError> {
    if record.kind == "chat" {
        return Err(ReverifyError::Chat);
    }
    let unusable = |what: &str, e: &dyn std::fmt::Display| {
        ReverifyError::Unusable(format!("the trace's {what}: {e}"))
    };
    // A stored value that does not read as its type is kept in `extra`:
    // read again here for its error.
    let opt = |k: &str| record.options.extra.get(k).cloned();
    let profile: MatchProfile = match record.options.profile {
        Some(p) => p,
        None => opt("match")
            .map(serde_json::from_value)
            .transpose()
            .map_err(|e| unusable("match profile", &e))?
            .unwrap_or(MatchProfile::Default),
    };
    let policy: ClaimPolicy = match record.options.policy {
        Some(p) => p,
        None => opt("claims")
            .map(serde_json::from_value)
            .transpose()
            .map_err(|e| unusable("claim policy", &e))?
            .unwrap_or(ClaimPolicy::Strict),
    };
    let chunks: Vec<Chunk> = record.chunks.parse().map_err(|e| unusable("chunks", &e))?;
    let chunks = ChunkSet::new(chunks).map_err(|e| unusable("chunks", &e))?;
    let stored = record.contract.as_ref().map(JsonText::to_value);
    let provenance = Provenance {
        trace_id: record.trace_id.clone(),
        created_at: stored
            .as_ref()
            .and_then(|c| c.get("created_at"))
            .and_then(|v| v.as_str())
            .map_or_else(|| record.created_at.to_string(), str::to_string),
        question: record.question.clone(),
        model: record.model.clone(),
    };
    let channel = channel(record)?;
    let stopped = match record.stop_reason.as_deref() {
        Some("refusal" | "content_filter") => Some(RefusalCode::R4),
        Some("length" | "error") => Some(RefusalCode::R3),
        _ => None,
    };
    let (contract, note) = match (stopped, &record.raw_output, channel) {
        (Some(code), _, _) => (
            Contract::refused(code, provenance, profile, Vec::new()),
            Some(format!(
                "the generation stopped early ({}): its output was never an answer",
                record.stop_reason.as_deref().unwrap_or("")
            )),
        ),
        (None, None, _) => (
            verify_with(
                &GroundedAnswer {
                    answerable: false,
                    claims: Vec::new(),
                },
                &chunks,
                profile,
                policy,
                provenance,
            ),
            None,
        ),
        // An extractive answer's claims take their text from their quotes:
        // the same rule as when it was verified.
        (None, Some(raw), Channel::Answer(form)) => match form.parse_answer(raw.as_bytes()) {
            Ok(a) => (verify_with(&a, &chunks, profile, policy, provenance), None),
            Err(e) => (
                Contract::refused(RefusalCode::R3, provenance, profile, Vec::new()),
                Some(format!("the stored raw output is not a valid answer ({e})")),
            ),
        },
        (None, Some(raw), Channel::Prose) => {
            match prose::verify_prose_with(raw, &chunks, profile, policy, provenance) {
                Ok(c) => (c, None),
                Err(e) => {
                    return Err(ReverifyError::Output(format!(
                        "the stored prose answer: {e}"
                    )));
                }
            }
        }
        (None, Some(raw), Channel::Native(format)) => {
            let response: serde_json::Value = serde_json::from_str(raw).map_err(|e| {
                ReverifyError::Output(format!("the stored provider response is not JSON: {e}"))
            })?;
            let request = record.options.request.as_ref();
            match native::convert(
                format, &response, request, &chunks, profile, policy, provenance,
            ) {
                Ok(c) => (c, None),
                Err((_, e)) => {
                    return Err(ReverifyError::Output(format!(
                        "the stored provider response: {}",
                        e.message
                    )));
                }
            }
        }
    };
    let mut contract = contract;
    if let Some(s) = &stored {
        keep_locations(&mut contract, s);
    }
    // Compared as values, not texts: traces written before contracts were
    // kept as text may spell the same JSON differently.
    let same = stored.is_some_and(|s| serde_json::to_value(&contract).is_ok_and(|c| c == s));
    Ok(Reverified {
        contract,
        same,
        note,
    })
}

/// Quote locations (contract v1's optional `citations[].location`) are put
/// on after verification from the docs folder's PDF layout, which a trace
/// does not hold, so verification cannot recompute them: a re-verified
/// citation keeps the stored location of the same citation (same claim and
/// position, same chunk, same span). A location is never invented, and one
/// whose citation changed is dropped, so a changed citation still differs.
///
/// A table header (`citations[].table_header`) is recomputed; a trace
/// written before contracts carried one keeps its citation without it, so
/// it still re-verifies as the same. One that was stored is compared.
fn keep_locations(contract: &mut Contract, stored: &serde_json::Value) {
    let Some(claims) = stored.get("claims").and_then(serde_json::Value::as_array) else {
        return;
    };
    for (claim, old) in contract.claims.iter_mut().zip(claims) {
        let Some(cites) = old.get("citations").and_then(serde_json::Value::as_array) else {
            continue;
        };
        for (c, o) in claim.citations.iter_mut().zip(cites) {
            let same_chunk =
                o.get("chunk_id").and_then(serde_json::Value::as_str) == Some(c.chunk_id.as_str());
            let same_span =
                c.span.is_some() && o.get("span").cloned() == serde_json::to_value(c.span).ok();
            if same_chunk && same_span && c.location.is_none() {
                c.location = o
                    .get("location")
                    .and_then(|l| serde_json::from_value(l.clone()).ok());
            }
            if same_chunk && same_span && o.get("table_header").is_none() {
                c.table_header = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use groundcite_core::prose;

    use super::*;
    use crate::TraceChunks;

    fn chunks() -> ChunkSet {
        ChunkSet::new(vec![Chunk {
            chunk_id: "refunds#1".into(),
            content: "Refunds are available within 30 days of purchase.".into(),
            source_title: None,
            source_url: None,
            page_number: None,
            score: None,
        }])
        .unwrap()
    }

    fn provenance() -> Provenance {
        Provenance {
            trace_id: "t-1".into(),
            created_at: "2026-12-02T00:00:00Z".into(),
            question: None,
            model: None,
        }
    }

    /// A trace as the service's `/v1/parse` wrote it before traces named
    /// their form: the kind alone says it is prose.
    #[test]
    fn a_prose_trace_re_verifies_as_prose_even_without_its_form() {
        let text = "Refunds are available within 30 days of purchase [1].";
        let contract = prose::verify_prose_with(
            text,
            &chunks(),
            MatchProfile::Default,
            ClaimPolicy::Strict,
            provenance(),
        )
        .unwrap();
        let mut record = TraceRecord::new("t-1", "parse");
        record.chunks = TraceChunks::from_chunks(chunks().chunks());
        record.raw_output = Some(text.into());
        record.contract = Some(JsonText::serialize(&contract).unwrap());
        let r = reverify(&record).unwrap();
        assert!(r.same, "{:?}", r.contract);
        assert!(r.contract.answerable);
        // With its form recorded, the same.
        record.answer_form = Some("prose".into());
        assert!(reverify(&record).unwrap().same);
        // Read as a JSON answer, it would be R3: the channel matters.
        record.answer_form = Some("grounded".into());
        let wrong = reverify(&record).unwrap();
        assert!(!wrong.same);
        assert_eq!(wrong.contract.refusal.unwrap().code, RefusalCode::R3);
    }

    /// `ask` over PDFs stores contracts whose citations carry `location`;
    /// re-verification (which has no PDF layout) keeps them, so an
    /// unchanged answer is the same, and a changed one still differs.
    #[test]
    fn a_located_citation_re_verifies_as_the_same() {
        let raw = r#"{"answerable": true, "claims": [{"text": "Refunds take 30 days.",
            "citations": [{"chunk_id": "refunds#1", "quote": "Refunds are available within 30 days of purchase."}]}]}"#;
        let answer: GroundedAnswer = serde_json::from_str(raw).unwrap();
        let mut contract = verify_with(
            &answer,
            &chunks(),
            MatchProfile::Default,
            ClaimPolicy::Strict,
            provenance(),
        );
        let location = groundcite_core::QuoteLocation {
            page_number: 2,
            rects: vec![[72.0, 696.5, 340.25, 718.0]],
        };
        contract.claims[0].citations[0].location = Some(location.clone());
        let mut record = TraceRecord::new("t-1", "answer");
        record.chunks = TraceChunks::from_chunks(chunks().chunks());
        record.raw_output = Some(raw.into());
        record.contract = Some(JsonText::serialize(&contract).unwrap());
        let r = reverify(&record).unwrap();
        assert!(r.same, "{:?}", r.contract);
        assert_eq!(r.contract.claims[0].citations[0].location, Some(location));

        // The stored contract cited another span: no location carried over
        // to a citation it does not describe, and the difference shows.
        let mut moved = contract.clone();
        moved.claims[0].citations[0].span = Some(groundcite_core::Span::new(1, 5));
        record.contract = Some(JsonText::serialize(&moved).unwrap());
        let r = reverify(&record).unwrap();
        assert!(!r.same);
        assert_eq!(r.contract.claims[0].citations[0].location, None);
    }

    /// A quoted table row carries its header row. A trace stored before
    /// contracts carried headers re-verifies as the same; a stored header
    /// that is not the chunk's shows as a difference.
    #[test]
    fn a_table_row_citation_re_verifies_with_or_without_its_stored_header() {
        let table = ChunkSet::new(vec![Chunk {
            chunk_id: "errors#1".into(),
            content: "| Code | Meaning |\n|---|---|\n| RM-4221 | The key was revoked. |".into(),
            source_title: None,
            source_url: None,
            page_number: None,
            score: None,
        }])
        .unwrap();
        let raw = r#"{"answerable": true, "claims": [{"text": "RM-4221 means a revoked key.",
            "citations": [{"chunk_id": "errors#1", "quote": "| RM-4221 | The key was revoked. |"}]}]}"#;
        let answer: GroundedAnswer = serde_json::from_str(raw).unwrap();
        let contract = verify_with(
            &answer,
            &table,
            MatchProfile::Default,
            ClaimPolicy::Strict,
            provenance(),
        );
        let header = contract.claims[0].citations[0]
            .table_header
            .clone()
            .unwrap();
        assert_eq!(header.source_text, "| Code | Meaning |");
        assert_eq!((header.span.start(), header.span.end()), (0, 18));
        let mut record = TraceRecord::new("t-1", "answer");
        record.chunks = TraceChunks::from_chunks(table.chunks());
        record.raw_output = Some(raw.into());
        let stored = |c: &Contract| Some(JsonText::serialize(c).unwrap());

        record.contract = stored(&contract);
        assert!(reverify(&record).unwrap().same);
        let mut old = contract.clone();
        old.claims[0].citations[0].table_header = None;
        record.contract = stored(&old);
        let r = reverify(&record).unwrap();
        assert!(r.same, "{:?}", r.contract);
        assert_eq!(r.contract.claims[0].citations[0].table_header, None);
        let mut forged = contract.clone();
        forged.claims[0].citations[0].table_header = Some(groundcite_core::TableHeader {
            source_text: "| Code | Fix |".into(),
            span: groundcite_core::Span::new(0, 14),
        });
        record.contract = stored(&forged);
        let r = reverify(&record).unwrap();
        assert!(!r.same);
        assert_eq!(r.contract.claims[0].citations[0].table_header, Some(header));
    }

    #[test]
    fn a_stopped_generation_re_verifies_to_its_refusal_and_chat_is_not_verifiable() {
        let contract = Contract::refused(
            RefusalCode::R4,
            provenance(),
            MatchProfile::Default,
            Vec::new(),
        );
        let mut record = TraceRecord::new("t-1", "answer");
        record.chunks = TraceChunks::from_chunks(chunks().chunks());
        // A partial output that would parse as a (different) answer.
        record.raw_output = Some(r#"{"answerable": false, "claims": []}"#.into());
        record.stop_reason = Some("refusal".into());
        record.contract = Some(JsonText::serialize(&contract).unwrap());
        let r = reverify(&record).unwrap();
        assert!(r.same, "{:?}", r.contract);
        assert!(r.note.unwrap().contains("refusal"));

        let chat = TraceRecord::new("t-2", "chat");
        assert!(
            reverify(&chat)
                .unwrap_err()
                .to_string()
                .contains("chat completion")
        );
        let mut unknown = TraceRecord::new("t-3", "answer");
        unknown.answer_form = Some("haiku".into());
        assert!(reverify(&unknown).is_err());
    }

    /// A convert trace of each channel that came after the dispatch was
    /// written (its `answer_form` names the format) re-verifies through the
    /// same converter to the same contract, with its warnings.
    #[test]
    fn new_native_channels_re_verify_to_the_same_contract() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/native");
        let read = |rel: &str| std::fs::read_to_string(dir.join(rel)).unwrap();
        for (format, folder, response) in [
            (NativeFormat::Gemini, "gemini", "grounded.response.json"),
            (NativeFormat::Cohere, "cohere", "rag.response.json"),
            (
                NativeFormat::OpenaiResponses,
                "openai-responses",
                "file_search.response.json",
            ),
        ] {
            let chunks: Vec<Chunk> =
                serde_json::from_str(&read(&format!("{folder}/chunks.json"))).unwrap();
            let set = ChunkSet::new(chunks).unwrap();
            let raw: serde_json::Value =
                serde_json::from_str(&read(&format!("{folder}/{response}"))).unwrap();
            let contract = native::convert(
                format,
                &raw,
                None,
                &set,
                MatchProfile::Default,
                ClaimPolicy::Strict,
                provenance(),
            )
            .unwrap();
            assert!(contract.answerable, "{format:?}");
            assert!(!contract.warnings.is_empty(), "{format:?}");
            let mut record = TraceRecord::new("t-1", "convert");
            record.chunks = TraceChunks::from_chunks(set.chunks());
            record.raw_output = Some(raw.to_string());
            record.answer_form = Some(format.as_str().into());
            record.contract = Some(JsonText::serialize(&contract).unwrap());
            let r = reverify(&record).unwrap();
            assert!(r.same, "{format:?}: {:?}", r.contract);
            // Without the form, the convert trace's options name the format.
            record.answer_form = None;
            record.options.from = Some(format.as_str().into());
            assert!(reverify(&record).unwrap().same, "{format:?}");
        }
    }
}
