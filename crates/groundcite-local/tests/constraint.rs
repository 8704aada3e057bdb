//! The decoding grammar, driven byte by byte through llguidance with its
//! single-byte test vocabulary: what it lets through and what it stops.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use groundcite_core::{
    AnswerForm, Candidate, Chunk, ChunkSet, GroundedAnswer, Introduced, MatchProfile, Provenance,
    verify,
};
use groundcite_local::grammar::{
    Choice, ClaimText, GrammarLimits, QuoteMode, candidate_grammar, grounded_grammar,
    grounded_max_bytes, schema_grammar,
};
use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{ApproximateTokEnv, TokEnv};
use llguidance::{Matcher, ParserFactory};
use proptest::prelude::*;

/// Limits with free claim text (most tests are about quotes).
fn free_text() -> GrammarLimits {
    GrammarLimits {
        claim_text: ClaimText::Free,
        ..GrammarLimits::default()
    }
}

fn factory() -> ParserFactory {
    let env: TokEnv = Arc::new(ApproximateTokEnv::single_byte());
    let mut f = ParserFactory::new_simple(&env).unwrap();
    f.quiet();
    f
}

/// Feeds `text` byte by byte; `Ok(())` when every byte is allowed and the
/// grammar accepts at the end, else where it stopped.
fn run(f: &ParserFactory, grammar: &str, text: &str) -> Result<(), String> {
    let mut m = Matcher::new(f.create_parser(TopLevelGrammar::from_lark(grammar.to_string())));
    if let Some(e) = m.get_error() {
        panic!("grammar error: {e}\n{grammar}");
    }
    for (i, b) in text.bytes().enumerate() {
        let mask = m.compute_mask().map_err(|e| e.to_string())?;
        if !mask.is_allowed(u32::from(b)) {
            return Err(format!(
                "byte {i} ({:?}) refused after {:?}",
                b as char,
                &text[..i]
            ));
        }
        m.consume_token(u32::from(b)).map_err(|e| e.to_string())?;
    }
    if m.is_accepting().map_err(|e| e.to_string())? {
        Ok(())
    } else {
        Err("incomplete".into())
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

fn sample() -> Vec<Chunk> {
    vec![
        chunk(
            "refunds.md#chunk-0",
            "# Refunds\nRefunds are issued to the original payment method within 5 business days.",
        ),
        chunk(
            "quotes.md#chunk-1",
            "He said \"yes\" \\ then left.\n\tTabs\u{a0}and ünïcödé — too.",
        ),
    ]
}

fn answer(id: &str, quote_json: &str) -> String {
    format!(
        r#"{{"answerable": true, "claims": [{{"citations": [{{"quote": "{quote_json}", "chunk_id": "{id}"}}], "text": "A claim."}}]}}"#
    )
}

/// Word-level verbatim quotes (the finest granularity).
fn verbatim() -> String {
    grounded_grammar(&sample(), QuoteMode::VerbatimWords, &free_text())
}

/// Sentence-level verbatim quotes (the default).
fn sentences() -> String {
    grounded_grammar(&sample(), QuoteMode::Verbatim, &free_text())
}

#[test]
fn default_quotes_are_whole_sentences() {
    let f = factory();
    run(
        &f,
        &sentences(),
        &answer(
            "refunds.md#chunk-0",
            "Refunds are issued to the original payment method within 5 business days.",
        ),
    )
    .unwrap();
    run(
        &f,
        &sentences(),
        &answer(
            "refunds.md#chunk-0",
            "# Refunds\\nRefunds are issued to the original payment method within 5 business days.",
        ),
    )
    .unwrap();
    // Part of a sentence is refused: the quote must carry the whole of it.
    let e = run(
        &f,
        &sentences(),
        &answer("refunds.md#chunk-0", "Refunds are issued"),
    )
    .unwrap_err();
    assert!(e.contains("refused"), "{e}");
    run(
        &f,
        &sentences(),
        &answer(
            "quotes.md#chunk-1",
            "He said \\\"yes\\\" \\\\ then left.\\n\\t",
        ),
    )
    .unwrap();
}

#[test]
fn a_verbatim_quote_passes_and_verifies() {
    let f = factory();
    let text = answer("refunds.md#chunk-0", "within 5 business days.");
    run(&f, &verbatim(), &text).unwrap();
    let parsed: GroundedAnswer = serde_json::from_str(&text).unwrap();
    let set = ChunkSet::new(sample()).unwrap();
    let c = verify(&parsed, &set, MatchProfile::Default, prov());
    assert!(c.answerable, "{c:?}");
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}

#[test]
fn a_quote_may_span_lines_and_headings() {
    let f = factory();
    run(
        &f,
        &verbatim(),
        &answer("refunds.md#chunk-0", "Refunds\\nRefunds are issued"),
    )
    .unwrap();
}

#[test]
fn the_quote_decides_the_chunk_id() {
    let f = factory();
    // "Refunds" is only in the first chunk: the second's ID is refused
    // after it, whatever the model would prefer.
    let e = run(&f, &verbatim(), &answer("quotes.md#chunk-1", "Refunds")).unwrap_err();
    assert!(e.contains("refused"), "{e}");
    run(&f, &verbatim(), &answer("refunds.md#chunk-0", "Refunds")).unwrap();
    // Text in both chunks may cite either (both verify).
    let both = vec![chunk("a", "same words here"), chunk("b", "the same words")];
    let g = grounded_grammar(&both, QuoteMode::VerbatimWords, &free_text());
    let ok: Vec<bool> = ["a", "b"]
        .iter()
        .map(|id| run(&f, &g, &answer(id, "same words")).is_ok())
        .collect();
    assert!(ok.iter().any(|x| *x), "{ok:?}");
}

#[test]
fn a_paraphrase_is_refused() {
    let f = factory();
    let e = run(
        &f,
        &verbatim(),
        &answer("refunds.md#chunk-0", "within five business days."),
    )
    .unwrap_err();
    assert!(e.contains("refused"), "{e}");
}

#[test]
fn a_quote_from_another_chunk_is_refused() {
    let f = factory();
    run(
        &f,
        &verbatim(),
        &answer("quotes.md#chunk-1", "within 5 business"),
    )
    .unwrap_err();
}

#[test]
fn an_unretrieved_chunk_id_is_refused() {
    let f = factory();
    let e = run(&f, &verbatim(), &answer("refunds.md#chunk-9", "Refunds")).unwrap_err();
    assert!(e.contains("refused"), "{e}");
}

#[test]
fn an_empty_quote_is_refused() {
    let f = factory();
    run(&f, &verbatim(), &answer("refunds.md#chunk-0", "")).unwrap_err();
}

#[test]
fn quotes_are_written_json_escaped() {
    let f = factory();
    // The chunk holds `"yes" \ then left.` + newline + tab: the quote must
    // be its JSON encoding, and it decodes to an exact substring.
    let q = r#"said \"yes\" \\ then left.\n\tTabs"#;
    let text = answer("quotes.md#chunk-1", q);
    run(&f, &verbatim(), &text).unwrap();
    let parsed: GroundedAnswer = serde_json::from_str(&text).unwrap();
    assert!(
        sample()[1]
            .content
            .contains(&parsed.claims[0].citations[0].quote)
    );
    // Raw (unescaped) control characters or an unescaped quote are refused.
    run(
        &f,
        &verbatim(),
        &answer("quotes.md#chunk-1", "said \"yes\""),
    )
    .unwrap_err();
    run(
        &f,
        &verbatim(),
        &answer("quotes.md#chunk-1", "left.\n\tTabs"),
    )
    .unwrap_err();
    // Non-ASCII and no-break space pass through as written.
    run(
        &f,
        &verbatim(),
        &answer("quotes.md#chunk-1", "Tabs\u{a0}and ünïcödé — too."),
    )
    .unwrap();
}

#[test]
fn unanswerable_has_no_claims() {
    let f = factory();
    run(&f, &verbatim(), r#"{"answerable": false, "claims": []}"#).unwrap();
    run(
        &f,
        &verbatim(),
        r#"{"answerable": false, "claims": [{"citations": [], "text": "x"}]}"#,
    )
    .unwrap_err();
    // With no chunk at all, unanswerable is the only answer.
    let none = grounded_grammar(&[], QuoteMode::Verbatim, &free_text());
    run(&f, &none, r#"{"answerable": false, "claims": []}"#).unwrap();
    run(&f, &none, &answer("refunds.md#chunk-0", "Refunds")).unwrap_err();
}

#[test]
fn claims_and_citations_are_bounded() {
    let f = factory();
    let limits = GrammarLimits {
        max_claims: 2,
        max_citations: 2,
        ..free_text()
    };
    let g = grounded_grammar(&sample(), QuoteMode::VerbatimWords, &limits);
    let cite = r#"{"quote": "Refunds", "chunk_id": "refunds.md#chunk-0"}"#;
    let claim = |n: usize| {
        format!(
            r#"{{"citations": [{}], "text": "T."}}"#,
            vec![cite; n].join(", ")
        )
    };
    let ans = |claims: Vec<String>| {
        format!(
            r#"{{"answerable": true, "claims": [{}]}}"#,
            claims.join(", ")
        )
    };
    run(&f, &g, &ans(vec![claim(2), claim(1)])).unwrap();
    run(&f, &g, &ans(vec![claim(1), claim(1), claim(1)])).unwrap_err();
    run(&f, &g, &ans(vec![claim(3)])).unwrap_err();
    // A claim needs a citation.
    run(&f, &g, &ans(vec![claim(0)])).unwrap_err();
}

#[test]
fn free_mode_lets_a_paraphrase_through_for_verification_to_drop() {
    let f = factory();
    let g = grounded_grammar(&sample(), QuoteMode::Free, &free_text());
    let text = answer("refunds.md#chunk-0", "within five business days.");
    run(&f, &g, &text).unwrap();
    let parsed: GroundedAnswer = serde_json::from_str(&text).unwrap();
    let set = ChunkSet::new(sample()).unwrap();
    let c = verify(&parsed, &set, MatchProfile::Default, prov());
    assert!(!c.answerable);
    // Chunk IDs stay limited in free mode too.
    run(&f, &g, &answer("other", "x")).unwrap_err();
}

#[test]
fn a_callers_schema_becomes_a_json_grammar() {
    let f = factory();
    let g = schema_grammar(&serde_json::json!({
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
        "additionalProperties": false
    }));
    run(&f, &g, r#"{"ok": true}"#).unwrap();
    run(&f, &g, r#"{"ok": 1}"#).unwrap_err();
}

fn candidates() -> Vec<Candidate> {
    let c = |id: &str, text: &str, start: usize| Candidate {
        chunk_id: id.into(),
        text: text.into(),
        start,
        context: "Help".into(),
        score: 0.5,
        required: false,
        introduces: None,
    };
    vec![
        c("shipping.md#chunk-2", "Express shipping costs $14.95.", 40),
        c(
            "shipping.md#chunk-2",
            "Standard shipping takes 3 to 7 business days.",
            0,
        ),
        c(
            "refunds.md#chunk-1",
            "Refunds are issued within 5 \"business\" days.",
            10,
        ),
    ]
}

/// An extractive answer citing `picks` (indexes into [`candidates`]).
fn extractive(picks: &[usize]) -> String {
    let cands = candidates();
    let claims: Vec<String> = picks
        .iter()
        .map(|&i| {
            format!(
                r#"{{"citations": [{{"quote": {}, "chunk_id": {}}}]}}"#,
                serde_json::to_string(&cands[i].text).unwrap(),
                serde_json::to_string(&cands[i].chunk_id).unwrap()
            )
        })
        .collect();
    format!(
        r#"{{"answerable": true, "claims": [{}]}}"#,
        claims.join(", ")
    )
}

#[test]
fn candidate_answers_quote_candidates_in_order_each_once() {
    let f = factory();
    let g = candidate_grammar(&candidates(), 3, Choice::Subset).lark;
    for ok in [&[0][..], &[1], &[2], &[0, 1], &[0, 2], &[1, 2], &[0, 1, 2]] {
        run(&f, &g, &extractive(ok)).unwrap_or_else(|e| panic!("{ok:?}: {e}"));
    }
    // Out of order, repeated, or beyond the limit: refused.
    for bad in [&[1, 0][..], &[0, 0], &[2, 2], &[]] {
        assert!(run(&f, &g, &extractive(bad)).is_err(), "{bad:?}");
    }
    let two = candidate_grammar(&candidates(), 2, Choice::Subset).lark;
    assert!(run(&f, &two, &extractive(&[0, 1, 2])).is_err());
    run(&f, &g, r#"{"answerable": false, "claims": []}"#).unwrap();
    // A quote that is not a whole candidate, or another chunk's ID: refused.
    let cut = extractive(&[0]).replace("$14.95.", "$14.");
    assert!(run(&f, &g, &cut).is_err());
    let moved = extractive(&[0]).replace("shipping.md#chunk-2", "refunds.md#chunk-1");
    assert!(run(&f, &g, &moved).is_err());
}

#[test]
fn a_lead_in_is_quoted_with_the_block_it_introduces_or_not_at_all() {
    let f = factory();
    let mut cands = candidates();
    cands[0] = Candidate {
        chunk_id: "printing.md#chunk-0".into(),
        text: "To list the printers, run:".into(),
        start: 0,
        context: "Help".into(),
        score: 0.9,
        required: false,
        introduces: Some(Introduced {
            start: 32,
            text: "lpstat -p -d\n\nlpstat -a".into(),
        }),
    };
    let g = candidate_grammar(&cands, 3, Choice::Subset);
    let both = r#"{"answerable": true, "claims": [{"citations": [{"quote": "To list the printers, run:", "chunk_id": "printing.md#chunk-0"}, {"quote": "lpstat -p -d\n\nlpstat -a", "chunk_id": "printing.md#chunk-0"}]}]}"#;
    run(&f, &g.lark, both).unwrap();
    assert!(g.max_bytes >= both.len());
    let alone = r#"{"answerable": true, "claims": [{"citations": [{"quote": "To list the printers, run:", "chunk_id": "printing.md#chunk-0"}]}]}"#;
    assert!(run(&f, &g.lark, alone).is_err());
    // The claim reads as one line: the lead-in, then the block.
    let claim = AnswerForm::Extractive
        .parse_answer(both.as_bytes())
        .unwrap()
        .claims
        .remove(0);
    assert_eq!(claim.text, cands[0].claim_text());
    assert_eq!(
        claim.text,
        "To list the printers, run: lpstat -p -d lpstat -a"
    );
    assert_eq!(claim.citations, cands[0].citations());
}

#[test]
fn prefix_choice_starts_with_the_best_and_goes_on_in_order() {
    let f = factory();
    let g = candidate_grammar(&candidates(), 3, Choice::Prefix).lark;
    for ok in [&[0][..], &[0, 1], &[0, 1, 2]] {
        run(&f, &g, &extractive(ok)).unwrap_or_else(|e| panic!("{ok:?}: {e}"));
    }
    for bad in [&[1][..], &[0, 2], &[1, 2]] {
        assert!(run(&f, &g, &extractive(bad)).is_err(), "{bad:?}");
    }
}

#[test]
fn required_candidates_are_quoted_first_in_order() {
    let f = factory();
    let mut cands = candidates();
    cands[0].required = true;
    cands[1].required = true;
    for choice in [Choice::Subset, Choice::Prefix] {
        let g = candidate_grammar(&cands, 3, choice).lark;
        run(&f, &g, &extractive(&[0, 1])).unwrap();
        run(&f, &g, &extractive(&[0, 1, 2])).unwrap();
        for bad in [&[0][..], &[1], &[0, 2], &[1, 2]] {
            assert!(run(&f, &g, &extractive(bad)).is_err(), "{bad:?}");
        }
        // Unanswerable stays possible: the model decides that.
        run(&f, &g, r#"{"answerable": false, "claims": []}"#).unwrap();
    }
}

#[test]
fn the_longest_candidate_answer_fits_the_bound_and_parses_extractively() {
    let cands = candidates();
    for max in 1..=3 {
        let bound = candidate_grammar(&cands, max, Choice::Subset).max_bytes;
        // The longest output: the `max` longest claims.
        let mut by_len: Vec<usize> = (0..cands.len()).collect();
        by_len.sort_by_key(|&i| std::cmp::Reverse(cands[i].text.len()));
        let mut picks: Vec<usize> = by_len.into_iter().take(max).collect();
        picks.sort_unstable();
        let longest = extractive(&picks);
        assert!(longest.len() <= bound, "{} > {bound}", longest.len());
        let parsed = AnswerForm::Extractive
            .parse_answer(longest.as_bytes())
            .unwrap();
        assert_eq!(parsed.claims.len(), max);
        // The claim's text is its quote.
        assert_eq!(parsed.claims[0].text, cands[picks[0]].text);
    }
    let none = candidate_grammar(&[], 3, Choice::Subset);
    run(
        &factory(),
        &none.lark,
        r#"{"answerable": false, "claims": []}"#,
    )
    .unwrap();
    assert_eq!(
        none.max_bytes,
        r#"{"answerable": false, "claims": []}"#.len()
    );
}

#[test]
fn the_grounded_bound_covers_its_longest_answer() {
    let limits = GrammarLimits {
        max_claims: 2,
        max_citations: 1,
        ..GrammarLimits::default()
    };
    let chunks = sample();
    let bound = grounded_max_bytes(&chunks, QuoteMode::Verbatim, &limits);
    // Two claims quoting and restating a whole chunk (the most a claim can
    // hold) stay within the bound.
    let longest = chunks.iter().map(|c| c.content.len()).max().unwrap();
    assert!(bound >= 2 * 2 * longest, "{bound}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any run of whole pieces of a chunk, JSON-encoded, is accepted, and
    /// decodes to an exact substring (so verification passes).
    #[test]
    fn every_piece_run_is_accepted(text in "[a-zA-Z0-9 ,.\"'\\\\\n\t-]{1,60}", a in 0usize..64, len in 1usize..64) {
        let pieces = groundcite_local::grammar::pieces(&text);
        let start = a % pieces.len();
        let end = (start + len).min(pieces.len());
        let quote: String = pieces[start..end].concat();
        let json = serde_json::to_string(&quote).unwrap();
        let c = vec![chunk("c", &text)];
        let g = grounded_grammar(&c, QuoteMode::VerbatimWords, &free_text());
        let f = factory();
        let r = run(&f, &g, &answer("c", &json[1..json.len() - 1]));
        prop_assert!(r.is_ok(), "{:?} quote {:?}: {:?}", text, quote, r);
    }
}

#[test]
fn extractive_claim_text_is_whole_sentences_of_the_first_cited_chunk() {
    let f = factory();
    let g = grounded_grammar(&sample(), QuoteMode::Verbatim, &GrammarLimits::default());
    let with_text = |text: &str| {
        format!(
            r#"{{"answerable": true, "claims": [{{"citations": [{{"quote": "Refunds are issued to the original payment method within 5 business days.", "chunk_id": "refunds.md#chunk-0"}}], "text": "{text}"}}]}}"#
        )
    };
    run(
        &f,
        &g,
        &with_text("Refunds are issued to the original payment method within 5 business days."),
    )
    .unwrap();
    // Own words, part of a sentence, or a sentence of another chunk: refused.
    run(&f, &g, &with_text("Refunds take five days.")).unwrap_err();
    run(&f, &g, &with_text("Refunds are issued")).unwrap_err();
    run(
        &f,
        &g,
        &with_text("He said \\\"yes\\\" \\\\ then left.\\n\\t"),
    )
    .unwrap_err();
}
