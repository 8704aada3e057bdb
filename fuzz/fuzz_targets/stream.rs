//! Arbitrary bytes as a model's streamed answer, cut into fragments where
//! its first bytes say. `ClaimStream` and `StreamVerifier` must not panic,
//! must not depend on where the fragments end, and must agree with the
//! answer parsed at once: the claims handed out while streaming are the
//! answer's claims, and the streamed contract is `verify_with`'s.
#![no_main]

use std::sync::LazyLock;

use groundcite_core::stream::{ClaimStream, StreamVerifier};
use groundcite_core::{
    Chunk, ChunkSet, ClaimPolicy, GroundedAnswer, MatchProfile, Provenance, verify_with,
};
use libfuzzer_sys::fuzz_target;

static CHUNKS: LazyLock<ChunkSet> = LazyLock::new(|| {
    let chunk = |id: &str, content: &str| Chunk {
        chunk_id: id.into(),
        content: content.into(),
        source_title: None,
        source_url: None,
        page_number: None,
        score: None,
    };
    ChunkSet::new(vec![
        chunk("a", "Refunds are available within 30 days of purchase."),
        chunk("b", "Standard shipping takes 3 to 5 business days. ÉTÉ ﬁle"),
    ])
    .expect("fixed chunks are valid")
});

fn provenance() -> Provenance {
    Provenance {
        trace_id: "fuzz".into(),
        created_at: "2026-11-30T00:00:00Z".into(),
        question: None,
        model: None,
    }
}

/// Where to cut `len` bytes: up to 7 positions from the header, sorted.
fn cuts(header: &[u8], len: usize) -> Vec<usize> {
    let mut cuts: Vec<usize> = header
        .iter()
        .map(|&b| {
            if len == 0 {
                0
            } else {
                usize::from(b) * 257 % (len + 1)
            }
        })
        .collect();
    cuts.sort_unstable();
    cuts
}

fn pieces<'a>(text: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut from = 0;
    for &c in cuts {
        out.push(&text[from..c]);
        from = c;
    }
    out.push(&text[from..]);
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    let n = usize::from(n % 8).min(rest.len());
    let (header, text) = rest.split_at(n);
    let cuts = cuts(header, text.len());

    // The same bytes, whole and in fragments.
    let mut whole = ClaimStream::new();
    let whole_claims = whole.feed_bytes(text);
    let whole_answer = whole.finish();
    let mut cut = ClaimStream::new();
    let mut cut_claims = Vec::new();
    let mut cut_failed = false;
    for piece in pieces(text, &cuts) {
        match cut.feed_bytes(piece) {
            Ok(claims) => cut_claims.extend(claims),
            Err(_) => cut_failed = true,
        }
    }
    let cut_answer = cut.finish();
    assert_eq!(
        whole_answer, cut_answer,
        "fragment boundaries changed the result"
    );
    assert_eq!(whole_claims.is_err(), cut_failed);

    let Ok(answer) = whole_answer else {
        return;
    };
    // Handed out while streaming = the answer's claims = a one-shot parse.
    assert_eq!(whole_claims.as_deref().ok(), Some(answer.claims.as_slice()));
    assert_eq!(cut_claims, answer.claims);
    let parsed: GroundedAnswer =
        serde_json::from_slice(text).expect("what the stream accepts parses at once");
    assert_eq!(parsed, answer);

    // The streamed contract is the non-streamed one, fragments on
    // character boundaries (StreamVerifier takes text).
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    for (profile, policy) in [
        (MatchProfile::Default, ClaimPolicy::Strict),
        (MatchProfile::Lenient, ClaimPolicy::Lenient),
    ] {
        let mut v = StreamVerifier::new(&CHUNKS, profile).with_claim_policy(policy);
        let mut from = 0;
        for &c in cuts.iter().chain(std::iter::once(&text.len())) {
            let mut c = c.max(from);
            while !text.is_char_boundary(c) {
                c += 1;
            }
            v.feed(&text[from..c])
                .expect("the same text fed whole did not fail");
            from = c;
        }
        let streamed = v
            .finish(provenance())
            .expect("the same text finished whole");
        let at_once = verify_with(&answer, &CHUNKS, profile, policy, provenance());
        assert_eq!(
            streamed, at_once,
            "streamed and non-streamed contracts differ"
        );
    }
});
