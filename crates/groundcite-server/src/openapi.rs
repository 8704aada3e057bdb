//! The OpenAPI 3.1 document served at `/openapi.json`.
//!
//! The contract's schema is the published `schemas/contract-v1.schema.json`
//! (one source of truth), its `$defs` hoisted into `components/schemas`.

use std::sync::OnceLock;

use serde_json::{Map, Value, json};

use crate::error::ErrorCode;

const CONTRACT_SCHEMA: &str = include_str!("../../../schemas/contract-v1.schema.json");

/// The document (built once).
pub fn document() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(build)
}

/// Rewrites `#/$defs/x` references to `#/components/schemas/Contract_x`.
fn rewrite_refs(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get_mut("$ref")
                && let Some(name) = r.strip_prefix("#/$defs/")
            {
                *r = format!("#/components/schemas/Contract_{name}");
            }
            for child in m.values_mut() {
                rewrite_refs(child);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(rewrite_refs),
        _ => {}
    }
}

fn contract_schemas(schemas: &mut Map<String, Value>) {
    let mut contract: Value = serde_json::from_str(CONTRACT_SCHEMA).unwrap_or_else(|_| json!({}));
    rewrite_refs(&mut contract);
    if let Some(obj) = contract.as_object_mut() {
        obj.remove("$schema");
        obj.remove("$id");
        if let Some(Value::Object(defs)) = obj.remove("$defs") {
            for (name, schema) in defs {
                schemas.insert(format!("Contract_{name}"), schema);
            }
        }
    }
    schemas.insert("Contract".into(), contract);
}

fn r(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

fn json_body(schema: Value) -> Value {
    json!({"required": true, "content": {"application/json": {"schema": schema}}})
}

fn error(description: &str) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": r("Error")}}})
}

/// Responses every authenticated JSON endpoint may give.
fn common_errors(responses: &mut Map<String, Value>) {
    for (code, what) in [
        ("400", "The body is not JSON."),
        ("401", "No valid API key."),
        ("413", "The body or the chunk count is over the limit."),
        ("415", "The body is not sent as application/json."),
        (
            "422",
            "The body does not have the expected shape, or a value is over a limit.",
        ),
        (
            "500",
            "Internal error (no details; see the log under the trace ID).",
        ),
        (
            "503",
            "Overloaded (with Retry-After), timed out, or the trace store is unavailable.",
        ),
    ] {
        responses.insert(code.into(), error(what));
    }
}

fn operation(summary: &str, body: Option<Value>, ok: Value, extra: &[(&str, Value)]) -> Value {
    let mut responses = Map::new();
    responses.insert("200".into(), ok);
    common_errors(&mut responses);
    for (code, v) in extra {
        responses.insert((*code).into(), v.clone());
    }
    let mut op = json!({"summary": summary, "security": [{"bearer": []}], "responses": responses});
    if let Some(b) = body {
        op["requestBody"] = b;
    }
    op
}

fn contract_ok() -> Value {
    json!({
        "description": "Renderer contract v1; `X-Trace-Id` names the stored trace.",
        "headers": {"X-Trace-Id": {"schema": {"type": "string"}}},
        "content": {"application/json": {"schema": r("Contract")}}
    })
}

fn common_props() -> Value {
    json!({
        "question": {"type": ["string", "null"], "description": "The user's question, copied into the contract."},
        "model": {"type": ["string", "null"], "description": "The model that produced the answer."},
        "trace_id": {"type": ["string", "null"], "minLength": 1, "maxLength": 128, "pattern": "^[A-Za-z0-9._:-]+$",
                      "description": "A trace ID of the caller's; default: the request's own (UUIDv7)."},
        "match": {"type": ["string", "null"], "enum": ["default", "lenient", null]},
        "claims": {"type": ["string", "null"], "enum": ["strict", "lenient", null],
                   "description": "Claims whose quotes do not carry their quantities: dropped (strict) or kept with a warning."}
    })
}

fn request_schema(required: &[&str], own: Value) -> Value {
    let mut props = common_props();
    if let (Some(p), Some(o)) = (props.as_object_mut(), own.as_object()) {
        for (k, v) in o {
            p.insert(k.clone(), v.clone());
        }
    }
    json!({"type": "object", "additionalProperties": false, "required": required, "properties": props})
}

fn build() -> Value {
    let mut schemas = Map::new();
    contract_schemas(&mut schemas);
    schemas.insert("Chunk".into(), json!({
        "type": "object",
        "required": ["chunk_id", "content"],
        "properties": {
            "chunk_id": {"type": "string", "minLength": 1, "maxLength": 256},
            "content": {"type": "string"},
            "source_title": {"type": ["string", "null"]},
            "source_url": {"type": ["string", "null"]},
            "page_number": {"type": ["integer", "null"], "minimum": 0, "maximum": 4294967295u64},
            "score": {"type": ["number", "null"]}
        }
    }));
    schemas.insert(
        "Citation".into(),
        json!({
            "type": "object", "additionalProperties": false, "required": ["chunk_id", "quote"],
            "properties": {"chunk_id": {"type": "string"}, "quote": {"type": "string"}}
        }),
    );
    schemas.insert("Claim".into(), json!({
        "type": "object", "additionalProperties": false, "required": ["text", "citations"],
        "properties": {"text": {"type": "string"}, "citations": {"type": "array", "items": r("Citation")}}
    }));
    schemas.insert("GroundedAnswer".into(), json!({
        "type": "object", "additionalProperties": false, "required": ["answerable", "claims"],
        "properties": {"answerable": {"type": "boolean"}, "claims": {"type": "array", "items": r("Claim")}}
    }));
    let chunks = json!({"type": "array", "items": r("Chunk"), "maxItems": 200});
    schemas.insert(
        "VerifyRequest".into(),
        request_schema(
            &["chunks", "answer"],
            json!({"chunks": chunks, "answer": r("GroundedAnswer")}),
        ),
    );
    schemas.insert("ParseRequest".into(), request_schema(
        &["chunks", "text"],
        json!({"chunks": chunks, "text": {"type": "string", "minLength": 1,
               "description": "A free-form answer with citation markers ([1], [^1], [doc1], (Source: title), a Sources list)."}}),
    ));
    schemas.insert("ConvertRequest".into(), request_schema(
        &["chunks", "from", "response"],
        json!({
            "chunks": chunks,
            "from": {"type": "string", "enum": ["anthropic", "bedrock-rag", "bedrock-converse", "gemini", "cohere", "openai-responses"],
                     "description": "The provider's response shape. gemini: groundingMetadata, segment offsets in UTF-8 bytes; cohere: message.citations, offsets in code points; openai-responses: file_citation annotations mapped through file_search_call results (the request must include \"file_search_call.results\")."},
            "response": {"description": "The provider's response (JSON; for Anthropic also the SSE text as a string)."},
            "request": {"description": "The request sent to the provider, when its sources were not one per chunk (anthropic and bedrock-converse only)."}
        }),
    ));
    schemas.insert("AnswerRequest".into(), json!({
        "type": "object", "additionalProperties": false, "required": ["question", "chunks"],
        "properties": {
            "question": {"type": "string", "minLength": 1},
            "chunks": chunks,
            "stream": {"type": ["boolean", "null"], "description": "Server-sent events (same as Accept: text/event-stream)."},
            "max_tokens": {"type": ["integer", "null"], "minimum": 1, "maximum": 32768},
            "temperature": {"type": ["number", "null"], "minimum": 0, "maximum": 2},
            "trace_id": common_props()["trace_id"],
            "match": common_props()["match"],
            "claims": common_props()["claims"]
        }
    }));
    schemas.insert("AskRequest".into(), json!({
        "type": "object", "additionalProperties": false, "required": ["question"],
        "properties": {
            "question": {"type": "string", "minLength": 1},
            "stream": {"type": ["boolean", "null"], "description": "Server-sent events (same as Accept: text/event-stream)."},
            "top_k": {"type": ["integer", "null"], "minimum": 1, "maximum": groundcite_ask::MAX_TOP_K,
                      "description": "Chunks to retrieve; default: the service's (--top-k)."},
            "trace_id": common_props()["trace_id"],
            "match": common_props()["match"],
            "claims": common_props()["claims"]
        }
    }));
    schemas.insert("Info".into(), json!({
        "type": "object", "required": ["version", "corpus", "provider", "match_profile"],
        "properties": {
            "version": {"type": "string"},
            "tenant": {"type": ["string", "null"], "description": "The tenant of the key; null without authentication."},
            "corpus": {"description": "The corpus of /v1/ask; null when none is configured.",
                "oneOf": [{"type": "null"}, {"type": "object", "required": ["documents", "chunks", "top_k", "gate", "retrieval"], "properties": {
                    "documents": {"type": ["integer", "null"], "minimum": 0, "description": "Null when a search service is the corpus."},
                    "chunks": {"type": ["integer", "null"], "minimum": 0},
                    "retriever": {"enum": ["index", "postgres", "opensearch", "azure-search"], "description": "groundcite's own index of --docs, or the search service searched instead."},
                    "top_k": {"type": "integer", "minimum": 1}, "gate": {"enum": ["retrieval", "evidence", "off"]}, "retrieval": {"enum": ["hybrid", "bm25"]}}}]},
            "provider": {"type": ["string", "null"], "description": "The answer provider of /v1/answer and /v1/ask; null when none."},
            "match_profile": {"enum": ["default", "lenient"]}
        }
    }));
    let codes: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    let codes_description = format!(
        "Stable, one HTTP status each: {}.",
        ErrorCode::ALL
            .iter()
            .map(|c| format!("{} ({})", c.as_str(), c.status().as_u16()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    schemas.insert("Error".into(), json!({
        "type": "object", "required": ["error"],
        "properties": {"error": {
            "type": "object", "required": ["code", "message"],
            "properties": {
                "code": {"type": "string", "enum": codes, "description": codes_description},
                "message": {"type": "string"},
                "path": {"type": "string", "description": "The JSON path of the offending value."},
                "trace_id": {"type": "string"}
            }
        }}
    }));
    schemas.insert("TraceRecord".into(), json!({
        "type": "object",
        "required": ["trace_id", "created_at", "kind", "chunks", "warnings", "options", "timings"],
        "properties": {
            "trace_id": {"type": "string"}, "created_at": {"type": "string"},
            "tenant": {"type": ["string", "null"]}, "kind": {"type": "string"},
            "question": {"type": ["string", "null"]}, "chunks": {"type": "array"},
            "prompt": {}, "schema_hash": {"type": ["string", "null"]},
            "raw_output": {"type": ["string", "null"]}, "contract": {},
            "warnings": {"type": "array", "items": {"type": "string"}},
            "provider": {"type": ["string", "null"]}, "model": {"type": ["string", "null"]},
            "provider_request_id": {"type": ["string", "null"]},
            "options": {"type": "object"}, "timings": {"type": "object"}, "error": {}
        }
    }));
    schemas.insert("Reverified".into(), json!({
        "type": "object", "required": ["trace_id", "same", "contract"],
        "properties": {
            "trace_id": {"type": "string"},
            "same": {"type": "boolean", "description": "The new contract equals the stored one."},
            "note": {"type": ["string", "null"]},
            "contract": r("Contract"),
            "stored_contract": {}
        }
    }));

    let trace_param = json!([{"name": "trace_id", "in": "path", "required": true,
        "schema": {"type": "string", "minLength": 1, "maxLength": 128, "pattern": "^[A-Za-z0-9._:-]+$"}}]);
    let sse_ok = json!({
        "description": "Renderer contract v1 as JSON; or, with Accept: text/event-stream or stream: true, server-sent events `claim` ({index, claim}), `claim_dropped` ({index, warnings}), then `done` (the contract, sent after the trace is committed) or `error` (an Error).",
        "headers": {"X-Trace-Id": {"schema": {"type": "string"}}},
        "content": {
            "application/json": {"schema": r("Contract")},
            // One event (as SSE clients and schemathesis read the stream):
            // its name and its JSON data as text.
            "text/event-stream": {"schema": {
                "type": "object", "required": ["event", "data"],
                "properties": {
                    "event": {"enum": ["claim", "claim_dropped", "done", "error"]},
                    "data": {"type": "string", "description": "JSON: {index, claim}, {index, warnings}, the contract, or an Error."}
                }
            }}
        }
    });
    let conflict = error("A trace with this trace_id exists already.");
    let provider_errors: Vec<(&str, Value)> = vec![
        ("409", conflict.clone()),
        (
            "501",
            error(
                "Code not_configured: the service was started without the model this endpoint needs.",
            ),
        ),
        (
            "502",
            error("The provider failed (status and request ID in the message)."),
        ),
        ("504", error("The provider timed out.")),
        (
            "503",
            error(
                "Overloaded (with Retry-After), timed out, or the trace store is unavailable; or code provider_unavailable (with Retry-After): the answer provider kept failing and its circuit breaker is open, so the request was not sent.",
            ),
        ),
    ];
    let mut ask_errors = provider_errors.clone();
    ask_errors.retain(|(code, _)| *code != "409");
    ask_errors.push((
        "409",
        error("No corpus is configured (code no_corpus: start the service with --docs), or a trace with this trace_id exists already."),
    ));
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "groundcite",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Verified, traced answers: every claim links to a retrieved chunk and a quote that is really in it. Errors are {\"error\": {\"code\", \"message\"}} with a stable code."
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": schemas
        },
        "paths": {
            "/v1/verify": {"post": operation("Verify a structured answer against the retrieved chunks.",
                Some(json_body(r("VerifyRequest"))), contract_ok(), &[("409", conflict.clone())])},
            "/v1/parse": {"post": operation("Verify a free-form answer's written citations.",
                Some(json_body(r("ParseRequest"))), contract_ok(), &[("409", conflict.clone())])},
            "/v1/convert": {"post": operation("Convert and verify provider-native citations (Anthropic, Bedrock).",
                Some(json_body(r("ConvertRequest"))), contract_ok(), &[("409", conflict.clone())])},
            "/v1/answer": {"post": operation("Generate with the configured provider, verify, and trace.",
                Some(json_body(r("AnswerRequest"))), sse_ok.clone(), &provider_errors)},
            "/v1/ask": {"post": operation(
                "Answer from the service's own corpus: retrieve (BM25, fused with sentence vectors when the embedding model is installed), gate (unanswerable without the model when retrieval found nothing, or, with the embedded model's evidence gate, when no sentence is close to the question), generate, verify, trace (kind `ask`).",
                Some(json_body(r("AskRequest"))), sse_ok, &ask_errors)},
            "/v1/info": {"get": operation("What this deployment serves: the corpus of /v1/ask, the answer provider, the key's tenant.", None,
                json!({"description": "The deployment's capabilities.", "content": {"application/json": {"schema": r("Info")}}}), &[])},
            "/v1/traces/{trace_id}": {"get": with_params(operation("A stored trace of this tenant.", None,
                    json!({"description": "The trace.", "content": {"application/json": {"schema": r("TraceRecord")}}}),
                    &[("404", error("No such trace for this tenant."))]), &trace_param)},
            "/v1/traces/{trace_id}/verify": {"post": with_params(operation("Re-verify a stored raw output with the same rule.", None,
                    json!({"description": "The new contract and whether it equals the stored one.", "content": {"application/json": {"schema": r("Reverified")}}}),
                    &[("404", error("No such trace for this tenant.")), ("409", error("The trace cannot be re-verified."))]), &trace_param)},
            "/v1/chunks/{chunk_id}/document": {"get": with_params(operation(
                    "The PDF a chunk of the service's own corpus was extracted from (the web app's page previewer). Only PDFs, only documents of the index, only inside the docs folder.",
                    None,
                    json!({"description": "The PDF document.", "content": {"application/pdf": {"schema": {"type": "string", "format": "binary"}}}}),
                    &[("404", error("No such chunk in this corpus, not a PDF, or the document is gone.")),
                      ("409", error("No corpus is configured (code no_corpus)."))]),
                    &json!([{"name": "chunk_id", "in": "path", "required": true, "schema": {"type": "string"},
                             "description": "A chunk ID of the corpus, percent-encoded as one path segment."}]))},
            "/v1/chat/completions": {"post": operation(
                "OpenAI-compatible Chat Completions with structured outputs, backed by the embedded model.",
                Some(json_body(json!({"type": "object", "required": ["messages"], "properties": {
                    "model": {"type": "string"}, "messages": {"type": "array"},
                    "response_format": {"type": "object"},
                    "max_tokens": {"type": "integer", "minimum": 1, "description": "Output token limit (default 1024), capped to what the model's context leaves after the prompt; see the x-groundcite-max-tokens-capped response header."},
                    "max_completion_tokens": {"type": "integer", "minimum": 1, "description": "As max_tokens, which it overrides."},
                    "stream": {"type": "boolean"}, "n": {"type": "integer"}
                }}))),
                json!({"description": "A chat.completion object, or chat.completion.chunk events with stream: true.",
                       "headers": {"x-groundcite-max-tokens-capped": {
                           "description": "Present when the requested (or default) output limit exceeded what the model's context leaves after the prompt: the limit applied instead.",
                           "schema": {"type": "integer"}}},
                       "content": {"application/json": {"schema": {"type": "object"}},
                                   "text/event-stream": {"schema": {"type": "string"}}}}),
                &provider_errors)},
            "/healthz": {"get": {"summary": "The process is up.", "security": [],
                "responses": {"200": {"description": "Up.", "content": {"application/json": {"schema": {"type": "object"}}}}}}},
            "/readyz": {"get": {"summary": "Warm-up done and the trace store answers.", "security": [],
                "responses": {
                    "200": {"description": "Ready.", "content": {"application/json": {"schema": {"type": "object"}}}},
                    "503": {"description": "Not ready.", "content": {"application/json": {"schema": {"type": "object"}}}}}}},
            "/metrics": {"get": {"summary": "Prometheus metrics.", "security": [],
                "responses": {"200": {"description": "Text exposition format.", "content": {"text/plain": {"schema": {"type": "string"}}}}}}},
            "/openapi.json": {"get": {"summary": "This document.", "security": [],
                "responses": {"200": {"description": "OpenAPI 3.1.", "content": {"application/json": {"schema": {"type": "object"}}}}}}}
        }
    })
}

fn with_params(mut op: Value, params: &Value) -> Value {
    op["parameters"] = params.clone();
    op
}
