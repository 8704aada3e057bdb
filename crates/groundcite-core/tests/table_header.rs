//! The optional `table_header` of a citation (contract v1, additive): set by
//! verification when a quote starts in a Markdown table's body row, valid
//! against the published schema, shown by the text renderer, and absent
//! everywhere else.

#![allow(clippy::unwrap_used)]

mod common;

use common::{contract_validator, make_bare_reference, provenance};
use groundcite_core::{
    Chunk, ChunkSet, Citation, Claim, Contract, GroundedAnswer, MatchProfile, render_text, verify,
};
use serde_json::json;

/// An API guide's error table, with an accented cell before it so that code
/// points and bytes differ.
const ERRORS: &str = "Café note: codes below.\n\n| Code | Status | Meaning |\n|:-----|:------:|---------|\n\
                      | RM-4221 | 401 | The API key was revoked. |\n| RM-4223 | 422 | A template variable is missing. |\n";

fn verified(quotes: &[&str]) -> Contract {
    let chunks = ChunkSet::new(vec![Chunk {
        chunk_id: "errors#1".into(),
        content: ERRORS.into(),
        source_title: Some("Error codes".into()),
        source_url: None,
        page_number: None,
        score: None,
    }])
    .unwrap();
    let answer = GroundedAnswer {
        answerable: true,
        claims: quotes
            .iter()
            .map(|q| Claim {
                text: (*q).into(),
                citations: vec![Citation {
                    chunk_id: "errors#1".into(),
                    quote: (*q).into(),
                }],
            })
            .collect(),
    };
    verify(&answer, &chunks, MatchProfile::default(), provenance())
}

#[test]
fn a_quoted_row_carries_its_header_row_and_validates() {
    let c = verified(&[
        "| RM-4223 | 422 | A template variable is missing. |",
        "The API key was revoked.",
        "Café note: codes below.",
    ]);
    let v = serde_json::to_value(&c).unwrap();
    let header =
        json!({"source_text": "| Code | Status | Meaning |", "span": {"start": 25, "end": 52}});
    // A whole row, and a cell's text: both start in a body row.
    assert_eq!(v["claims"][0]["citations"][0]["table_header"], header);
    assert_eq!(v["claims"][1]["citations"][0]["table_header"], header);
    let chars: Vec<char> = ERRORS.chars().collect();
    assert_eq!(
        chars[25..52].iter().collect::<String>(),
        "| Code | Status | Meaning |"
    );
    // Text outside the table has none: the key is absent, not null.
    assert!(v["claims"][2]["citations"][0].get("table_header").is_none());
    assert!(contract_validator().is_valid(&v), "{v:#}");
    let back: Contract = serde_json::from_value(v).unwrap();
    assert_eq!(back, c);
}

#[test]
fn the_header_row_itself_and_text_around_a_table_have_none() {
    let c = verified(&["| Code | Status | Meaning |", "codes below"]);
    for claim in &c.claims {
        assert_eq!(claim.citations[0].table_header, None);
    }
}

#[test]
fn the_text_rendering_shows_the_columns_above_the_quoted_row() {
    let text = render_text(&verified(&["| RM-4221 | 401 | The API key was revoked. |"]));
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("    \"| RM-4221"))
        .unwrap();
    assert_eq!(lines[at - 1], "    columns: | Code | Status | Meaning |");
    assert_eq!(text.matches("columns:").count(), 1);
}

#[test]
fn schema_rejects_impossible_headers() {
    let validator = contract_validator();
    let base =
        serde_json::to_value(verified(&["| RM-4221 | 401 | The API key was revoked. |"])).unwrap();
    let with = |header: serde_json::Value| {
        let mut v = base.clone();
        v["claims"][0]["citations"][0]["table_header"] = header;
        v
    };
    assert!(!validator.is_valid(&with(json!(null))));
    assert!(!validator.is_valid(&with(
        json!({"source_text": "", "span": {"start": 0, "end": 0}})
    )));
    assert!(!validator.is_valid(&with(json!({"source_text": "| A |"}))));
    assert!(!validator.is_valid(&with(
        json!({"source_text": "| A |", "span": {"start": 0, "end": 5}, "x": 1})
    )));
    // A bare reference quotes nothing, so it has no row and no header.
    let mut reference = base.clone();
    make_bare_reference(&mut reference);
    assert!(!validator.is_valid(&reference));
    reference["claims"][0]["citations"][0]
        .as_object_mut()
        .unwrap()
        .remove("table_header");
    assert!(validator.is_valid(&reference), "{reference:#}");
}
