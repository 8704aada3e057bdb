//! Arbitrary bytes as a provider response (Anthropic JSON or stream,
//! Bedrock RetrieveAndGenerate, Bedrock Converse) over fixed chunks. Must not
//! panic; every verified citation keeps the verifier's invariant.
#![no_main]

use std::sync::LazyLock;

use groundcite_core::native::{SourceLayout, anthropic, bedrock};
use groundcite_core::{
    Chunk, ChunkSet, ClaimPolicy, Contract, MatchKind, MatchProfile, Provenance, normalize,
};
use libfuzzer_sys::fuzz_target;

static CHUNKS: LazyLock<ChunkSet> = LazyLock::new(|| {
    let chunk = |id: &str, content: &str, page: Option<u32>| Chunk {
        chunk_id: id.into(),
        content: content.into(),
        source_title: Some(id.to_uppercase()),
        source_url: None,
        page_number: page,
        score: None,
    };
    ChunkSet::new(vec![
        chunk(
            "a",
            "Refunds are available within 30 days of purchase.",
            None,
        ),
        chunk(
            "b",
            "Standard shipping takes 3 to 5 business days. ÉTÉ ﬁle",
            Some(2),
        ),
        chunk("c", "The warranty covers defects for two years.", Some(3)),
    ])
    .expect("fixed chunks are valid")
});

fn check(contract: &Contract) {
    for claim in &contract.claims {
        for cit in &claim.citations {
            let chunk = CHUNKS.get(&cit.chunk_id).expect("cited chunk exists");
            if cit.kind != MatchKind::Reference {
                let st = cit.source_text.as_deref().expect("source text");
                assert_eq!(cit.span.expect("span").slice(&chunk.content), Some(st));
                assert_eq!(
                    normalize(st, MatchProfile::Default),
                    normalize(cit.quote.as_deref().expect("quote"), MatchProfile::Default)
                );
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let provenance = || Provenance {
        trace_id: "fuzz".into(),
        created_at: "2026-11-30T00:00:00Z".into(),
        question: None,
        model: None,
    };
    let layout = SourceLayout::one_per_chunk(&CHUNKS);
    let p = MatchProfile::Default;
    if let Ok(response) = anthropic::read_response(&text) {
        if let Ok(c) = anthropic::convert(
            &response,
            &CHUNKS,
            &layout,
            p,
            ClaimPolicy::Strict,
            provenance(),
        ) {
            check(&c);
        }
        if let Ok(l) = SourceLayout::from_anthropic_request(&response, &CHUNKS) {
            let _ =
                anthropic::convert(&response, &CHUNKS, &l, p, ClaimPolicy::Strict, provenance())
                    .map(|c| check(&c));
        }
    }
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
        if let Ok(c) = bedrock::convert_retrieve_and_generate(
            &v,
            &CHUNKS,
            p,
            ClaimPolicy::Strict,
            provenance(),
        ) {
            check(&c);
        }
        if let Ok(c) =
            bedrock::convert_converse(&v, &CHUNKS, &layout, p, ClaimPolicy::Strict, provenance())
        {
            check(&c);
        }
        if let Ok(l) = SourceLayout::from_converse_request(&v, &CHUNKS) {
            let _ =
                bedrock::convert_converse(&v, &CHUNKS, &l, p, ClaimPolicy::Strict, provenance())
                    .map(|c| check(&c));
        }
    }
});
