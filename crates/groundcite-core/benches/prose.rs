//! Throughput of the prose parser (issue 3) on long answers (~100 KB).
//!
//! `cargo bench -p groundcite-core --bench prose`
//!
//! Each workload is one answer of about 100 KB over 20 chunks of about 2 KB
//! (titles set), the size of a long report-style RAG answer. Divan reports
//! bytes per second of answer text (`BytesCount`).

#![allow(missing_docs)]

use divan::counter::BytesCount;
use groundcite_core::prose;
use groundcite_core::{Chunk, ChunkSet, MatchProfile, Provenance};

fn main() {
    divan::main();
}

const TARGET_BYTES: usize = 100_000;
const CHUNKS: usize = 20;

const TOPICS: [&str; 10] = [
    "Refund policy",
    "Shipping FAQ",
    "Warranty terms",
    "Q3 revenue memo",
    "Onboarding guide",
    "Security handbook",
    "Travel expenses",
    "Support hours",
    "Data retention",
    "Pricing sheet",
];

/// 20 chunks of about 2 KB; two chunks per title (same document, two parts).
fn chunks() -> ChunkSet {
    let list = (0..CHUNKS)
        .map(|i| {
            let topic = TOPICS[i % TOPICS.len()];
            let mut content = String::new();
            let mut k = 0;
            while content.len() < 2_000 {
                content.push_str(&format!(
                    "Section {i}.{k}: the {topic} states that requests of type {k} are handled within {} business days by team {}. ",
                    k + 2,
                    i * 7 + k
                ));
                k += 1;
            }
            Chunk {
                chunk_id: format!("doc-{i}#{}", i / TOPICS.len()),
                content,
                source_title: Some(if i < TOPICS.len() { topic.to_string() } else { format!("{topic} (part 2)") }),
                source_url: Some(format!("https://intranet.example.com/docs/{i}")),
                page_number: None,
                score: Some(1.0 - i as f64 / 40.0),
            }
        })
        .collect();
    ChunkSet::new(list).expect("valid chunks")
}

fn fill(mut paragraph: impl FnMut(usize) -> String) -> String {
    let mut s = String::with_capacity(TARGET_BYTES + 4_096);
    let mut i = 0;
    while s.len() < TARGET_BYTES {
        s.push_str(&paragraph(i));
        s.push_str("\n\n");
        i += 1;
    }
    s
}

/// Inline numeric markers on every sentence, lists, multi-source markers.
fn numeric() -> String {
    fill(|i| {
        let a = i % CHUNKS + 1;
        let b = (i + 3) % CHUNKS + 1;
        let c = (i + 7) % CHUNKS + 1;
        let d = (i + 11) % CHUNKS + 1;
        format!(
            "Requests of type {i} are handled within a few business days [{a}]. Larger requests go to a dedicated team [{a}, {b}], and escalations follow the handbook [{c}][{d}].\n- Item {i}: see the policy for details [^{a}].\n- Exceptions apply to type {i} requests [{}-{}].",
            b.min(CHUNKS - 1),
            b.min(CHUNKS - 1) + 1
        )
    })
}

/// Named references resolved by title (cached after the first lookup).
fn named() -> String {
    fill(|i| {
        let t = TOPICS[i % TOPICS.len()];
        format!(
            "Requests of type {i} are handled within a few business days (Source: {t} (part 2)). The same rule applies to priority cases (per the {t} (part 2)), with a few documented exceptions (Ref: {}).",
            TOPICS[(i + 1) % TOPICS.len()].to_lowercase().to_string() + " (part 2)"
        )
    })
}

/// Quoted text checked against the cited chunk with the matching rule.
fn quoted() -> String {
    fill(|i| {
        let c = i % CHUNKS;
        let topic = TOPICS[c % TOPICS.len()];
        let k = i % 12;
        format!(
            "The document is explicit: \"the {topic} states that requests of type {k} are handled within {} business days\" [{}]. Teams are named as well: \"by team {}\" [{}].",
            k + 2,
            c + 1,
            c * 7 + k,
            c + 1
        )
    })
}

/// Plain prose with a trailing Sources list: the whole answer is one claim.
fn sources() -> String {
    let mut s = fill(|i| {
        format!(
            "Paragraph {i}. Customers may return items and ask for their money back; delivery times vary by region and carrier. Requests are handled by the responsible team, and exceptions are listed in the documents below."
        )
    });
    s.push_str("## Sources\n");
    for (i, t) in TOPICS.iter().enumerate() {
        s.push_str(&format!(
            "{}. {t} — https://intranet.example.com/docs/{i}\n",
            i + 1
        ));
    }
    s
}

/// No citation at all: the full scan ends in the loud failure.
fn uncited() -> String {
    fill(|i| {
        format!(
            "Paragraph {i}. In [2024] the rule changed [sic]; see `items[1]` and the [manual](https://example.com/{i}). Requests are handled by the responsible team."
        )
    })
}

fn workload(name: &str) -> String {
    match name {
        "numeric" => numeric(),
        "named" => named(),
        "quoted" => quoted(),
        "sources" => sources(),
        "uncited" => uncited(),
        _ => unreachable!("unknown workload {name}"),
    }
}

/// The workloads do what they say: every claim cites, nothing is rejected
/// (except the uncited answer, which must fail loudly).
fn check(name: &str, text: &str, chunks: &ChunkSet) {
    let parsed = prose::parse(text, chunks, MatchProfile::Default);
    match (name, parsed) {
        ("uncited", Err(_)) => {}
        ("uncited", Ok(_)) => panic!("the uncited workload parsed"),
        (_, Err(e)) => panic!("{name}: {e}"),
        (_, Ok(p)) => {
            assert!(!p.claims.is_empty(), "{name}: no claims");
            for c in &p.claims {
                assert!(
                    c.warnings.is_empty() && !c.citations.is_empty(),
                    "{name}: claim {}: {:?}",
                    c.index,
                    c.warnings
                );
            }
        }
    }
}

const WORKLOADS: [&str; 5] = ["numeric", "named", "quoted", "sources", "uncited"];

/// `prose::parse`: markers, resolution and quote checks.
#[divan::bench(args = WORKLOADS, sample_count = 20)]
fn parse(bencher: divan::Bencher, name: &str) {
    let chunks = chunks();
    let text = workload(name);
    check(name, &text, &chunks);
    bencher.counter(BytesCount::of_str(&text)).bench(|| {
        prose::parse(divan::black_box(&text), &chunks, MatchProfile::Default)
            .map(|p| p.claims.len())
    });
}

/// `prose::verify_prose`: parse plus the verifier, up to contract v1.
#[divan::bench(args = ["numeric", "quoted"], sample_count = 20)]
fn verify(bencher: divan::Bencher, name: &str) {
    let chunks = chunks();
    let text = workload(name);
    bencher.counter(BytesCount::of_str(&text)).bench(|| {
        prose::verify_prose(
            divan::black_box(&text),
            &chunks,
            MatchProfile::Default,
            Provenance {
                trace_id: "bench".into(),
                created_at: "2026-11-30T00:00:00Z".into(),
                question: None,
                model: None,
            },
        )
        .map(|c| c.claims.len())
    });
}
