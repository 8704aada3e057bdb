//! Arbitrary bytes as a free-form answer, parsed against a few fixed chunks
//! (titles, a duplicate title, an ID that looks like a marker). Must not
//! panic; every verified citation keeps the verifier's invariant and a
//! loud failure reports an exact head of the answer.
#![no_main]

use std::sync::LazyLock;

use groundcite_core::{Chunk, ChunkSet, MatchKind, MatchProfile, Provenance, normalize, prose};
use libfuzzer_sys::fuzz_target;

static CHUNKS: LazyLock<ChunkSet> = LazyLock::new(|| {
    let chunk = |id: &str, content: &str, title: Option<&str>| Chunk {
        chunk_id: id.into(),
        content: content.into(),
        source_title: title.map(Into::into),
        source_url: Some(format!("https://example.com/{}", id.len())),
        page_number: None,
        score: None,
    };
    ChunkSet::new(vec![
        chunk("refunds#1", "Refunds are available within 30 days of purchase. Items must be returned in their original packaging.", Some("Refund policy")),
        chunk("refunds#2", "Store credit is issued within 5 business days after inspection.", Some("Refund Policy")),
        chunk("shipping#1", "Standard shipping takes 3 to 5 business days. Shipping is “free” over 50 €.", Some("Shipping FAQ")),
        chunk("doc1", "ÉTÉ straße ﬁle — naïve… café", Some("The Q3 revenue memo.pdf")),
    ])
    .expect("fixed chunks are valid")
});

fuzz_target!(|data: &[u8]| {
    let (profile, rest) = match data.split_first() {
        Some((b, rest)) if b & 1 == 1 => (MatchProfile::Lenient, rest),
        Some((_, rest)) => (MatchProfile::Default, rest),
        None => (MatchProfile::Default, data),
    };
    let text = String::from_utf8_lossy(rest);
    let provenance = Provenance {
        trace_id: "fuzz".into(),
        created_at: "2026-11-30T00:00:00Z".into(),
        question: None,
        model: None,
    };
    match prose::verify_prose(&text, &CHUNKS, profile, provenance) {
        Ok(contract) => {
            for claim in &contract.claims {
                assert!(!claim.citations.is_empty());
                for cit in &claim.citations {
                    let chunk = CHUNKS.get(&cit.chunk_id).expect("cited chunk exists");
                    if cit.kind == MatchKind::Reference {
                        assert!(
                            cit.quote.is_none() && cit.span.is_none() && cit.source_text.is_none()
                        );
                    } else {
                        let st = cit.source_text.as_deref().expect("source text");
                        assert_eq!(cit.span.expect("span").slice(&chunk.content), Some(st));
                        assert_eq!(
                            normalize(st, profile),
                            normalize(cit.quote.as_deref().expect("quote"), profile)
                        );
                    }
                }
            }
        }
        Err(e) => {
            assert!(text.starts_with(&e.head));
            assert_eq!(e.answer_chars, text.chars().count());
            assert!(e.head.chars().count() <= prose::HEAD_CHARS);
        }
    }
});
