//! The real model (SmolLM2-135M-Instruct, installed by `scripts/setup`),
//! not a fake: constrained answers verify, the verbatim-quote constraint is
//! what makes them verify, streaming gives the same text, and a dropped
//! stream cancels the run.

#![allow(clippy::unwrap_used)]

use std::sync::OnceLock;

use groundcite_core::{
    Chunk, ChunkSet, ClaimPolicy, Contract, GroundedAnswer, MatchProfile, Provenance, verify_with,
};
use groundcite_local::{EngineOptions, LocalGenerator, LocalSettings, QuoteMode, find_model};
use groundcite_providers::{Generator, Output};

fn generator() -> &'static LocalGenerator {
    static G: OnceLock<LocalGenerator> = OnceLock::new();
    G.get_or_init(|| {
        let path = find_model(None).unwrap_or_else(|e| panic!("{e}"));
        LocalGenerator::load(&path, EngineOptions::default(), LocalSettings::default())
            .unwrap_or_else(|e| panic!("{e}"))
    })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn chunk(id: &str, content: &str) -> Chunk {
    Chunk {
        chunk_id: id.into(),
        content: content.into(),
        source_title: None,
        source_url: None,
        page_number: None,
        score: None,
    }
}

fn prov() -> Provenance {
    Provenance {
        trace_id: "t".into(),
        created_at: "2026-01-01T00:00:00Z".into(),
        question: None,
        model: None,
    }
}

fn refunds() -> ChunkSet {
    ChunkSet::new(vec![
        chunk(
            "refunds.md#chunk-0",
            "# Refunds\n\nWe refund the full price of an unused item returned within 30 days of delivery. Refunds are issued to the original payment method within 5 business days after the warehouse receives the item.",
        ),
        chunk(
            "shipping.md#chunk-0",
            "# Shipping\n\nStandard shipping takes 3 to 7 business days. Express shipping arrives in 1 to 2 business days and costs $15.",
        ),
    ])
    .unwrap()
}

/// Generates with `g` and verifies strictly; returns the raw JSON too.
fn answer(g: &LocalGenerator, chunks: &ChunkSet, question: &str) -> (String, Contract) {
    let request = g.grounded_request(chunks, question);
    let generation = runtime().block_on(g.generate(&request)).unwrap();
    let Output::Json(text) = generation.output else {
        panic!("not JSON output")
    };
    let parsed: GroundedAnswer = serde_json::from_str(&text).unwrap();
    let contract = verify_with(
        &parsed,
        chunks,
        MatchProfile::Default,
        ClaimPolicy::Lenient,
        prov(),
    );
    (text, contract)
}

fn verified_citations(c: &Contract) -> usize {
    c.claims.iter().map(|cl| cl.citations.len()).sum()
}

fn dropped_citations(c: &Contract) -> usize {
    c.warnings
        .iter()
        .filter(|w| {
            matches!(
                serde_json::to_value(w.code)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .as_deref(),
                Some("quote_not_found" | "unknown_chunk_id")
            )
        })
        .count()
}

#[test]
fn a_constrained_answer_is_valid_json_and_verifies() {
    let g = generator();
    let (text, contract) = answer(g, &refunds(), "How long does a refund take?");
    assert!(contract.answerable, "{text}\n{contract:?}");
    assert!(verified_citations(&contract) >= 1, "{text}");
    assert_eq!(dropped_citations(&contract), 0, "{text}");
    let run = g.last_run().unwrap();
    assert!(run.prompt_tokens > 100 && run.sampled_tokens > 0, "{run:?}");
}

/// The proof that the constraint matters: on the same prompt, free quotes
/// from this model fail verification, verbatim ones pass.
#[test]
fn the_verbatim_constraint_turns_a_failing_quote_into_a_verified_one() {
    let verbatim = generator();
    let free = verbatim.with_settings(LocalSettings {
        quote_mode: QuoteMode::Free,
        ..LocalSettings::default()
    });
    let chunks = ChunkSet::new(vec![chunk(
        "warranty.md#chunk-0",
        "# Warranty\n\nEvery tent and backpack carries a two-year limited warranty against defects in materials and workmanship, counted from the date of purchase. Damage from misuse, accidents or normal wear is not covered.",
    )])
    .unwrap();
    let question = "What does the warranty cover and for how long?";
    let (free_text, free_contract) = answer(&free, &chunks, question);
    assert!(
        dropped_citations(&free_contract) >= 1,
        "expected the unconstrained quote to fail verification: {free_text}"
    );
    let (text, contract) = answer(verbatim, &chunks, question);
    assert!(contract.answerable, "{text}");
    assert_eq!(dropped_citations(&contract), 0, "{text}");
}

#[test]
fn streaming_yields_the_same_text_as_a_whole_generation() {
    let g = generator();
    let chunks = refunds();
    let request = g.grounded_request(&chunks, "How fast is express shipping?");
    let rt = runtime();
    let whole = rt.block_on(g.generate(&request)).unwrap();
    let streamed = rt.block_on(async {
        let mut s = g.generate_stream(&request).await.unwrap();
        let mut text = String::new();
        let mut pieces = 0;
        while let Some(d) = s.next_delta().await.unwrap() {
            text.push_str(&d);
            pieces += 1;
        }
        let generation = s.finish().await.unwrap();
        (text, pieces, generation)
    });
    let Output::Json(w) = whole.output else {
        panic!()
    };
    assert_eq!(streamed.0, w);
    assert!(streamed.1 > 3, "text arrived in {} pieces", streamed.1);
    assert_eq!(streamed.2.output, Output::Json(w));
}

#[test]
fn dropping_a_stream_cancels_the_run_and_frees_the_model() {
    let g = generator();
    let chunks = refunds();
    let request = g.grounded_request(&chunks, "How long does a refund take?");
    let rt = runtime();
    rt.block_on(async {
        let mut s = g.generate_stream(&request).await.unwrap();
        let first = s.next_delta().await.unwrap();
        assert!(first.is_some());
        drop(s);
    });
    // The engine is free again: a whole generation still works.
    let again = rt.block_on(g.generate(&request)).unwrap();
    assert!(matches!(again.output, Output::Json(_)));
}

#[test]
fn a_missing_model_is_one_sentence_naming_the_fix() {
    let e = find_model(Some(std::path::Path::new("/nonexistent/model.gguf"))).unwrap_err();
    assert!(e.to_string().contains("/nonexistent/model.gguf"), "{e}");
    let e = groundcite_local::LocalError::NotFound.to_string();
    assert!(
        e.contains("scripts/setup") && e.contains("--model-path"),
        "{e}"
    );
}
