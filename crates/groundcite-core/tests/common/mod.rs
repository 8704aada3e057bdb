//! Helpers shared by the core's data-driven tests: paths, the contract
//! schema, and the compact expectation format of `testdata/{verify,prose,native}`.

// Each test binary uses a different subset of these helpers.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use groundcite_core::Provenance;
use serde_json::Value;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A validator for the published contract v1 JSON Schema.
pub fn contract_validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("schemas/contract-v1.schema.json")).unwrap(),
    )
    .unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

/// Every key of `expected` must equal the same key in `actual` (recursively
/// for objects; arrays must have equal length). Extra keys in `actual` are fine.
pub fn assert_subset(expected: &Value, actual: &Value, at: &str) {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, ev) in e {
                let av = a
                    .get(k)
                    .unwrap_or_else(|| panic!("{at}.{k} missing in {actual}"));
                assert_subset(ev, av, &format!("{at}.{k}"));
            }
        }
        (Value::Array(e), Value::Array(a)) => {
            assert_eq!(
                e.len(),
                a.len(),
                "{at}: length differs: expected {expected:#}, got {actual:#}"
            );
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                assert_subset(ev, av, &format!("{at}[{i}]"));
            }
        }
        _ => assert_eq!(expected, actual, "{at}"),
    }
}

/// Checks a contract against a compact expectation: `refusal` is a code or
/// null; citation spans may be `[start, end]`; `warnings` must match in
/// number and order, each with optional `message_contains` / `message_lacks`.
pub fn check_contract(expect: &Value, actual: &Value, ctx: &str) {
    let mut expect = expect.clone();
    let obj = expect.as_object_mut().unwrap();
    if let Some(code) = obj.remove("refusal") {
        let got = actual["refusal"]
            .get("code")
            .cloned()
            .unwrap_or(Value::Null);
        assert_eq!(code, got, "{ctx}: refusal code\n{actual:#}");
    }
    for claim in obj
        .get_mut("claims")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        for cit in claim
            .get_mut("citations")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(Value::Array(s)) = cit.get("span").cloned() {
                cit["span"] = serde_json::json!({"start": s[0], "end": s[1]});
            }
        }
    }
    let warnings = obj.remove("warnings");
    assert_subset(&expect, actual, ctx);
    if let Some(Value::Array(ws)) = warnings {
        let got = actual["warnings"].as_array().unwrap();
        assert_eq!(
            ws.len(),
            got.len(),
            "{ctx}: warnings\n{:#}",
            actual["warnings"]
        );
        for (w, g) in ws.iter().zip(got) {
            let mut w = w.clone();
            let wo = w.as_object_mut().unwrap();
            let msg = g["message"].as_str().unwrap();
            if let Some(Value::String(s)) = wo.remove("message_contains") {
                assert!(msg.contains(&s), "{ctx}: {msg:?} lacks {s:?}");
            }
            if let Some(Value::String(s)) = wo.remove("message_lacks") {
                assert!(!msg.contains(&s), "{ctx}: {msg:?} contains {s:?}");
            }
            assert_subset(&w, g, &format!("{ctx}: warning {g}"));
        }
    }
}

/// The provenance of a contract built by a test: a fixed trace ID and
/// time, no question, no model.
pub fn provenance() -> Provenance {
    Provenance {
        trace_id: "01a234b0-b2b4-7749-a4f1-ef7a0e8d21e8".into(),
        created_at: "2026-12-02T08:00:00Z".into(),
        question: None,
        model: None,
    }
}

/// Turns the first citation of a contract's first claim (as JSON) into a
/// bare reference: no quote, no source text, no span; other keys stay.
pub fn make_bare_reference(contract: &mut Value) {
    let cite = &mut contract["claims"][0]["citations"][0];
    cite["match"] = Value::from("reference");
    cite["quote"] = Value::Null;
    cite["source_text"] = Value::Null;
    cite["span"] = Value::Null;
}
