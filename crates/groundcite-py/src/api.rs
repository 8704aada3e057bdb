//! What each Python function does, in plain Rust over JSON text: every
//! decision is the Rust crates' (`groundcite-core`, `groundcite-batch`);
//! this module only parses arguments the way the CLI does and serializes
//! the contract. No Python types here, so it is tested with `cargo test`.

use groundcite_batch::{LineError, Options, verify_line};
use groundcite_core::native::{self, NativeFormat, NativeInput, anthropic};
use groundcite_core::prose;
use groundcite_core::schema::{self, Fragment, Target, Violation};
use groundcite_core::{
    ClaimPolicy, Contract, GroundedAnswer, MatchProfile, Provenance, validate_trace_id, verify_with,
};
use serde_json::Value;

use crate::input::{BadInput, Failure, parse_chunks, parse_json};
use crate::stamp::{STAMP, new_trace_id, now_rfc3339};

/// The verification rules of one call: the matching profile and the claim
/// policy, by the names the CLI's `--match` and `--claims` take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// Matching profile (`default`, `lenient`).
    pub profile: MatchProfile,
    /// Claim policy (`strict`, `lenient`).
    pub policy: ClaimPolicy,
}

impl Rules {
    /// Parses the two names; an unknown one is bad input about `profile` or
    /// `claims`.
    pub fn parse(profile: &str, claims: &str) -> Result<Rules, BadInput> {
        Ok(Rules {
            profile: profile
                .parse()
                .map_err(|e| BadInput::new("profile", format!("{e}")))?,
            policy: claims
                .parse()
                .map_err(|e| BadInput::new("claims", format!("{e}")))?,
        })
    }
}

/// What a contract is stamped with, as given by the caller.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stamping {
    /// The user's question.
    pub question: Option<String>,
    /// The model that answered.
    pub model: Option<String>,
    /// A trace ID to use instead of a fresh UUIDv7.
    pub trace_id: Option<String>,
}

impl Stamping {
    /// The provenance to stamp: the trace ID is checked first (the CLI's
    /// `--trace-id` rule), a fresh one made when none was given.
    pub fn provenance(self) -> Result<Provenance, BadInput> {
        if let Some(id) = &self.trace_id {
            validate_trace_id(id).map_err(|m| BadInput::new("trace_id", m.to_string()))?;
        }
        Ok(Provenance {
            trace_id: self.trace_id.unwrap_or_else(new_trace_id),
            created_at: now_rfc3339(),
            question: self.question,
            model: self.model,
        })
    }
}

/// `groundcite verify`: the answer (a JSON `GroundedAnswer`) against the
/// chunks (a JSON array).
pub fn verify(
    answer: &str,
    chunks: &str,
    rules: Rules,
    stamping: Stamping,
) -> Result<Contract, BadInput> {
    let provenance = stamping.provenance()?;
    let chunks = parse_chunks("chunks", chunks)?;
    let answer: GroundedAnswer = parse_json("answer", answer)?;
    Ok(verify_with(
        &answer,
        &chunks,
        rules.profile,
        rules.policy,
        provenance,
    ))
}

/// `groundcite parse`: a free-form answer with citation markers.
pub fn parse(
    text: &str,
    chunks: &str,
    rules: Rules,
    stamping: Stamping,
) -> Result<Contract, Failure> {
    let provenance = stamping.provenance()?;
    let chunks = parse_chunks("chunks", chunks)?;
    if text.trim().is_empty() {
        return Err(BadInput::new("text", "answer text is empty").into());
    }
    prose::verify_prose_with(text, &chunks, rules.profile, rules.policy, provenance)
        .map_err(Failure::CitationFormat)
}

/// The provider names of `convert`, as the CLI's `--from` spells them.
pub const PROVIDERS: &str =
    "anthropic, bedrock-rag, bedrock-converse, gemini, cohere, openai-responses";

/// `groundcite convert`: a provider-native response (JSON text; for
/// `anthropic` an SSE stream or stream events too).
pub fn convert(
    provider: &str,
    response: &str,
    chunks: &str,
    request: Option<&str>,
    rules: Rules,
    stamping: Stamping,
) -> Result<Contract, BadInput> {
    let format: NativeFormat = serde_json::from_value(Value::String(provider.to_string()))
        .map_err(|_| {
            BadInput::new(
                "provider",
                format!("{provider:?} is not one of {PROVIDERS}"),
            )
        })?;
    if request.is_some() && !format.takes_request() {
        return Err(BadInput::new(
            "request",
            "applies to anthropic and bedrock-converse only",
        ));
    }
    let provenance = stamping.provenance()?;
    let chunks = parse_chunks("chunks", chunks)?;
    if response.trim().is_empty() {
        return Err(BadInput::new(
            "response",
            "is empty; expected a provider response",
        ));
    }
    let response: Value = match format {
        NativeFormat::Anthropic => {
            anthropic::read_response(response).map_err(|e| BadInput::from_core("response", e))?
        }
        _ => parse_json("response", response)?,
    };
    let request: Option<Value> = request.map(|r| parse_json("request", r)).transpose()?;
    native::convert(
        format,
        &response,
        request.as_ref(),
        &chunks,
        rules.profile,
        rules.policy,
        provenance,
    )
    .map_err(|(which, e)| match which {
        NativeInput::Request => BadInput::from_core("request", e),
        NativeInput::Response => BadInput::from_core("response", e),
    })
}

fn target(name: &str) -> Result<Target, BadInput> {
    name.parse()
        .map_err(|e| BadInput::new("target", format!("{e}")))
}

/// `groundcite schema --target T [--chunk-ids-from …]`: the strict
/// structured-output fragment for a provider, with its notes.
pub fn schema(target_name: &str, chunk_ids: Option<&[String]>) -> Result<Fragment, BadInput> {
    Ok(schema::request_fragment(target(target_name)?, chunk_ids))
}

/// `groundcite schema lint`: every rule of the provider's strict subset
/// that the schema (or request fragment, JSON text) breaks.
pub fn lint(document: &str, target_name: &str) -> Result<Vec<Violation>, BadInput> {
    let target = target(target_name)?;
    let doc: Value = parse_json("schema", document)?;
    Ok(schema::lint(&doc, target))
}

/// Batch options as `groundcite verify --batch` builds them.
pub fn batch_options(rules: Rules, model: Option<String>, jobs: Option<usize>) -> Options {
    Options {
        profile: rules.profile,
        policy: rules.policy,
        model,
        jobs,
        stamp: STAMP,
    }
}

/// A batch item that went wrong, as `requests` input: its 1-based
/// position is the `line`, as in `groundcite verify --batch`.
pub fn line_error(e: LineError) -> BadInput {
    BadInput {
        source: "requests".into(),
        line: Some(e.line),
        column: e.column,
        path: e.path,
        message: e.message,
    }
}

/// One batch item (a JSON request, `groundcite verify --batch`'s line)
/// verified. A blank item is bad input here: a batch file may hold blank
/// lines, a list of requests may not.
pub fn verify_item(doc: &[u8], position: usize, options: &Options) -> Result<Contract, BadInput> {
    match verify_line(doc, position, options) {
        Ok(Some(contract)) => Ok(contract),
        Ok(None) => Err(BadInput {
            line: Some(position),
            ..BadInput::new("requests", "is blank; expected a JSON request object")
        }),
        Err(e) => Err(line_error(e)),
    }
}

/// The contract as compact JSON, the CLI's `--batch` line.
pub fn to_json(contract: &Contract) -> String {
    // Serializing the contract's own types (strings, integers, finite
    // floats read from JSON) cannot fail; keep a valid document if it did.
    serde_json::to_string(contract).unwrap_or_else(|e| {
        serde_json::json!({"error": {"code": "internal", "message": e.to_string()}}).to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHUNKS: &str = r#"[{"chunk_id": "refunds#1", "content": "Refunds are available within 30 days of purchase.", "source_title": "Refunds", "source_url": "javascript:alert(1)"}]"#;
    const ANSWER: &str = r#"{"answerable": true, "claims": [
        {"text": "Refunds within 30 days.", "citations": [{"chunk_id": "refunds#1", "quote": "refunds are available within 30 days"}]},
        {"text": "Made up.", "citations": [{"chunk_id": "nope", "quote": "x"}]}]}"#;

    fn rules() -> Rules {
        Rules::parse("default", "strict").unwrap()
    }

    #[test]
    fn verify_keeps_what_verifies_and_says_why_the_rest_went() {
        let stamping = Stamping {
            trace_id: Some("t-1".into()),
            question: Some("q".into()),
            ..Stamping::default()
        };
        let c = verify(ANSWER, CHUNKS, rules(), stamping).unwrap();
        assert!(c.answerable);
        assert_eq!(c.trace_id, "t-1");
        assert_eq!(c.claims.len(), 1);
        let codes: Vec<&str> = c.warnings.iter().map(|w| w.code.as_str()).collect();
        assert_eq!(
            codes,
            ["unknown_chunk_id", "claim_unsupported", "unsafe_source_url"]
        );
        assert_eq!(c.sources[0].source_url, None);
    }

    #[test]
    fn bad_arguments_are_named() {
        let e = Rules::parse("fuzzy", "strict").unwrap_err();
        assert_eq!(e.source, "profile");
        let e = verify(
            ANSWER,
            CHUNKS,
            rules(),
            Stamping {
                trace_id: Some("a b".into()),
                ..Stamping::default()
            },
        )
        .unwrap_err();
        assert_eq!(e.source, "trace_id");
        let e = verify("[]", CHUNKS, rules(), Stamping::default()).unwrap_err();
        assert_eq!(e.source, "answer");
        assert!(e.message.contains("expected struct GroundedAnswer"), "{e}");
        let e = convert("openai", "{}", CHUNKS, None, rules(), Stamping::default()).unwrap_err();
        assert_eq!(e.source, "provider");
        let e = convert(
            "gemini",
            "{}",
            CHUNKS,
            Some("{}"),
            rules(),
            Stamping::default(),
        )
        .unwrap_err();
        assert_eq!(e.source, "request");
        assert_eq!(schema("bard", None).unwrap_err().source, "target");
    }

    #[test]
    fn prose_without_any_citation_is_a_citation_format_error() {
        let e = parse("No markers at all.", CHUNKS, rules(), Stamping::default()).unwrap_err();
        assert!(
            matches!(e, Failure::CitationFormat(ref c) if c.chunks == 1),
            "{e:?}"
        );
        let e = parse("  ", CHUNKS, rules(), Stamping::default()).unwrap_err();
        assert!(
            matches!(e, Failure::BadInput(ref b) if b.source == "text"),
            "{e:?}"
        );
        let c = parse(
            "Refunds are available within 30 days of purchase. [1]",
            CHUNKS,
            rules(),
            Stamping::default(),
        )
        .unwrap();
        assert!(c.answerable);
    }

    #[test]
    fn batch_items_fail_alone_with_their_position() {
        let options = batch_options(rules(), Some("m".into()), Some(2));
        let good = format!(
            r#"{{"chunks": {CHUNKS}, "answer": {}}}"#,
            ANSWER.replace('\n', " ")
        );
        let out = verify_item(good.as_bytes(), 1, &options).unwrap();
        let v: Value = serde_json::from_str(&to_json(&out)).unwrap();
        assert_eq!(v["model"], "m");
        let e = verify_item(b"{\"chunks\": [}", 7, &options).unwrap_err();
        assert_eq!((e.line, e.path.as_deref()), (Some(7), Some("chunks[0]")));
        let e = verify_item(b"  ", 3, &options).unwrap_err();
        assert_eq!(e.line, Some(3));
    }

    #[test]
    fn lint_reports_what_a_provider_rejects() {
        let v = lint(
            r#"{"type": "object", "properties": {"q": {"type": "string", "minLength": 1}}, "required": ["q"], "additionalProperties": false}"#,
            "azure",
        )
        .unwrap();
        assert_eq!(v[0].pointer, "/properties/q/minLength");
        let f = schema("openai", Some(&["a#1".to_string()])).unwrap();
        assert!(lint(&f.value.to_string(), "openai").unwrap().is_empty());
    }
}
