//! Arbitrary bytes split at the first NUL into a chunks JSON document and an
//! answer JSON document: serde parse, `ChunkSet::new`, `verify`. Must not
//! panic; every verified citation keeps the verifier's invariant.
#![no_main]

use groundcite_core::{
    Chunk, ChunkSet, GroundedAnswer, MatchProfile, Provenance, normalize, verify,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (chunks, answer) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => data.split_at(data.len() / 2),
    };
    let Ok(chunks) = serde_json::from_slice::<Vec<Chunk>>(chunks) else {
        return;
    };
    let Ok(answer) = serde_json::from_slice::<GroundedAnswer>(answer) else {
        return;
    };
    let Ok(chunks) = ChunkSet::new(chunks) else {
        return;
    };
    for profile in [MatchProfile::Default, MatchProfile::Lenient] {
        let contract = verify(
            &answer,
            &chunks,
            profile,
            Provenance {
                trace_id: "fuzz".into(),
                created_at: "2026-11-30T00:00:00Z".into(),
                question: None,
                model: None,
            },
        );
        for claim in &contract.claims {
            for cit in &claim.citations {
                let chunk = chunks.get(&cit.chunk_id).expect("cited chunk exists");
                let st = cit.source_text.as_deref().expect("source text");
                assert_eq!(cit.span.expect("span").slice(&chunk.content), Some(st));
                assert_eq!(
                    normalize(st, profile),
                    normalize(cit.quote.as_deref().expect("quote"), profile)
                );
            }
        }
        let _ = serde_json::to_string(&contract).expect("contracts serialize");
    }
});
