//! Cost of verifying one answer: 20 retrieved help-centre chunks of about
//! 2 KB (prose and an error-code table), three claims of two citations.
//! `prose` quotes sentences; `table` quotes table rows, whose header row the
//! verifier also finds (`citations[].table_header`); `mixed` has one quote
//! of each and one that is not in its chunk.
//!
//! `cargo bench -p groundcite-core --bench verify`

#![allow(missing_docs)]

use groundcite_core::{
    Chunk, ChunkSet, Citation, Claim, GroundedAnswer, MatchProfile, Provenance, verify,
};

fn main() {
    divan::main();
}

const PROSE: &str = "Your card is sent within 5 working days of approval. \
If it has not arrived after 10 working days, tell us in the app under \
**Cards > Report a problem** and we send a new one free of charge. \
You can freeze a card at any time; unfreezing it takes effect at once. \
A frozen card still receives refunds, and direct debits keep working. \
Contactless payments are limited to £100 each, and after five in a row \
the terminal asks for your PIN.";

const TABLE: &str = "\n\n| Code | HTTP | Message | How to fix it |\n\
|---|---|---|---|\n\
| RM-4010 | 400 | The request body is not valid JSON. | Check the body against the schema. |\n\
| RM-4031 | 403 | API key is missing a required scope. | Create a key with the scope named in the message. |\n\
| RM-4032 | 403 | Sender domain is not verified. | Verify the domain under **Domains**. |\n\
| RM-4221 | 401 | The key was revoked. | Create a new key and swap it in. |\n\
| RM-4290 | 429 | Too many requests. | Wait for the time in `Retry-After`. |\n\
| RM-5030 | 503 | Sending is paused for maintenance. | Retry with backoff. |\n\n";

/// Chunk `i`: prose, the table, then prose again (about 2 KB), with
/// its number in the text so that no two chunks are equal.
fn chunk(i: usize) -> Chunk {
    Chunk {
        chunk_id: format!("help/page-{i:02}.md#chunk-0"),
        content: format!("# Page {i}\n\n{PROSE}{TABLE}{PROSE} (See page {i}.)\n"),
        source_title: Some(format!("Page {i}")),
        source_url: Some(format!("https://help.example/page-{i:02}")),
        page_number: None,
        score: None,
    }
}

fn cite(i: usize, quote: &str) -> Citation {
    Citation {
        chunk_id: chunk(i).chunk_id,
        quote: quote.to_string(),
    }
}

fn answer(kind: &str) -> GroundedAnswer {
    let prose = [
        "If it has not arrived after 10 working days, tell us in the app under **Cards > Report a problem** and we send a new one free of charge.",
        "A frozen card still receives refunds, and direct debits keep working.",
        "Contactless payments are limited to £100 each",
    ];
    let rows = [
        "| RM-4031 | 403 | API key is missing a required scope. | Create a key with the scope named in the message. |",
        "| RM-4221 | 401 | The key was revoked. | Create a new key and swap it in. |",
        "| RM-5030 | 503 | Sending is paused for maintenance. | Retry with backoff. |",
    ];
    let claims = (0..3)
        .map(|k| {
            let citations = match kind {
                "prose" => vec![cite(k * 6, prose[k]), cite(k * 6 + 3, prose[(k + 1) % 3])],
                "table" => vec![cite(k * 6, rows[k]), cite(k * 6 + 3, rows[(k + 1) % 3])],
                _ => vec![
                    cite(k * 6, prose[k]),
                    cite(k * 6 + 3, rows[k]),
                    cite(k * 6 + 4, "A sentence that no chunk holds."),
                ],
            };
            Claim {
                text: format!("Claim {k}."),
                citations,
            }
        })
        .collect();
    GroundedAnswer {
        answerable: true,
        claims,
    }
}

fn provenance() -> Provenance {
    Provenance {
        trace_id: "01a234b0-b2b4-7749-a4f1-ef7a0e8d21e8".into(),
        created_at: "2026-12-06T08:00:00Z".into(),
        question: None,
        model: None,
    }
}

#[divan::bench(args = ["prose", "table", "mixed"])]
fn verify_answer(bencher: divan::Bencher, kind: &str) {
    let chunks = ChunkSet::new((0..20).map(chunk).collect()).expect("valid chunks");
    let answer = answer(kind);
    bencher.bench(|| {
        verify(
            divan::black_box(&answer),
            divan::black_box(&chunks),
            MatchProfile::default(),
            provenance(),
        )
    });
}
