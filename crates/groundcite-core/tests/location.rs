//! The optional `location` of a citation (contract v1, additive): absent
//! unless set, valid against the published schema when set, and rejected by
//! the schema where it cannot be (a bare reference, no rectangle).

#![allow(clippy::unwrap_used)]

mod common;

use common::{contract_validator, make_bare_reference, provenance};
use groundcite_core::{
    Chunk, ChunkSet, Citation, Claim, Contract, GroundedAnswer, MatchProfile, QuoteLocation, verify,
};
use serde_json::json;

fn contract() -> Contract {
    let chunks = ChunkSet::new(vec![Chunk {
        chunk_id: "manual.pdf#chunk-3".into(),
        content: "Refunds are issued within 5 business days.".into(),
        source_title: Some("Manual".into()),
        source_url: None,
        page_number: Some(4),
        score: None,
    }])
    .unwrap();
    let answer = GroundedAnswer {
        answerable: true,
        claims: vec![Claim {
            text: "Refunds take 5 business days.".into(),
            citations: vec![Citation {
                chunk_id: "manual.pdf#chunk-3".into(),
                quote: "within 5 business days".into(),
            }],
        }],
    };
    verify(&answer, &chunks, MatchProfile::default(), provenance())
}

#[test]
fn absent_unless_known_and_valid_when_set() {
    let validator = contract_validator();
    let mut c = contract();
    let plain = serde_json::to_value(&c).unwrap();
    assert!(plain["claims"][0]["citations"][0].get("location").is_none());
    assert!(validator.is_valid(&plain));

    c.claims[0].citations[0].location = Some(QuoteLocation {
        page_number: 4,
        rects: vec![[178.72, 675.36, 312.11, 687.36]],
    });
    let located = serde_json::to_value(&c).unwrap();
    assert_eq!(
        located["claims"][0]["citations"][0]["location"],
        json!({"page_number": 4, "rects": [[178.72, 675.36, 312.11, 687.36]]})
    );
    assert!(validator.is_valid(&located), "{located:#}");
    let back: Contract = serde_json::from_value(located).unwrap();
    assert_eq!(back, c);
}

#[test]
fn schema_rejects_impossible_locations() {
    let validator = contract_validator();
    let base = serde_json::to_value(contract()).unwrap();
    let with = |location: serde_json::Value| {
        let mut v = base.clone();
        v["claims"][0]["citations"][0]["location"] = location;
        v
    };
    assert!(!validator.is_valid(&with(json!({"page_number": 4, "rects": []}))));
    assert!(!validator.is_valid(&with(json!({"page_number": 0, "rects": [[0, 0, 1, 1]]}))));
    assert!(!validator.is_valid(&with(json!({"page_number": 4, "rects": [[0, 0, 1]]}))));
    assert!(!validator.is_valid(&with(json!(null))));
    // A bare reference has no span, so no place on the page either.
    let mut reference = with(json!({"page_number": 4, "rects": [[0, 0, 1, 1]]}));
    make_bare_reference(&mut reference);
    assert!(!validator.is_valid(&reference));
    cite_without_location(&mut reference);
    assert!(validator.is_valid(&reference), "{reference:#}");
}

fn cite_without_location(v: &mut serde_json::Value) {
    v["claims"][0]["citations"][0]
        .as_object_mut()
        .unwrap()
        .remove("location");
}
