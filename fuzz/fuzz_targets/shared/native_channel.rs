//! What the output-span channels' fuzz targets (Gemini, Cohere, OpenAI
//! Responses) share: fixed chunks, the invariant every contract keeps, and
//! one run of arbitrary bytes through `native::convert` for a format.

use std::sync::LazyLock;

use groundcite_core::native::{self, NativeFormat};
use groundcite_core::{
    Chunk, ChunkSet, ClaimPolicy, Contract, MatchKind, MatchProfile, Provenance, normalize,
};

static CHUNKS: LazyLock<ChunkSet> = LazyLock::new(|| {
    let chunk = |id: &str, content: &str, url: Option<&str>| Chunk {
        chunk_id: id.into(),
        content: content.into(),
        source_title: Some(id.to_uppercase()),
        source_url: url.map(str::to_string),
        page_number: None,
        score: None,
    };
    ChunkSet::new(vec![
        chunk(
            "a",
            "Refunds are available within 30 days of purchase.",
            Some("https://help.example.com/refunds"),
        ),
        chunk(
            "b",
            "Standard shipping takes 3 to 5 business days. ÉTÉ ﬁle 𝄞",
            Some("https://help.example.com/refunds"),
        ),
        chunk("c", "The warranty covers defects for two years.", None),
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

/// Arbitrary bytes as a response of `format`: must not panic; every
/// contract keeps the invariant, under both claim policies.
pub fn run(format: NativeFormat, data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let provenance = || Provenance {
        trace_id: "fuzz".into(),
        created_at: "2026-11-30T00:00:00Z".into(),
        question: None,
        model: None,
    };
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
        for policy in [ClaimPolicy::Strict, ClaimPolicy::Lenient] {
            if let Ok(c) = native::convert(
                format,
                &v,
                None,
                &CHUNKS,
                MatchProfile::Default,
                policy,
                provenance(),
            ) {
                check(&c);
            }
        }
    }
}
