//! Cost of the quantity check (issue 9) per claim.
//!
//! `cargo bench -p groundcite-core --bench quantity`

#![allow(missing_docs)]

use groundcite_core::quantity::{check_claim, extract};

fn main() {
    divan::main();
}

/// Realistic claim / verified-quote pairs (help centre, finance, medical, legal).
const PAIRS: &[(&str, &[&str])] = &[
    (
        "The refund window is 2 weeks.",
        &["Refunds are available within 30 days of purchase."],
    ),
    (
        "Adults may take 500 mg every 4 to 6 hours, up to 4 g in 24 hours.",
        &[
            "Adults: 500 mg every 4–6 hours as needed.",
            "Maximum daily dose: 4,000 mg in any 24-hour period.",
        ],
    ),
    (
        "The consultation closes on 30 November 2026.",
        &["Responses must be received by 2026-11-30."],
    ),
    (
        "Late payments incur a fee of up to $40, and the APR is 19.9%.",
        &[
            "Late payment fee: up to US$40.",
            "Purchase APR: 19.9% variable.",
        ],
    ),
    (
        "In app version 4.2, you can export up to 10,000 rows.",
        &["Version 4.2 adds CSV export of up to 10000 rows."],
    ),
    (
        "You must file an appeal within thirty (30) days of the decision.",
        &["An appeal must be filed no later than thirty (30) days after the date of the decision."],
    ),
    (
        "Q3 revenue grew 12% to $2.1 billion.",
        &["Revenue for the third quarter rose 12 percent year over year, to $2.1bn."],
    ),
    (
        "Support is available from 9am to 5pm on weekdays.",
        &["Our support team is available 9:00–17:00, Monday to Friday."],
    ),
];

/// The whole check for one claim: extraction from the claim and its quotes,
/// then comparison.
#[divan::bench(args = 0..PAIRS.len())]
fn check_one_claim(bencher: divan::Bencher, i: usize) {
    let (claim, quotes) = PAIRS[i];
    bencher.bench(|| check_claim(divan::black_box(claim), divan::black_box(quotes)));
}

/// The mix above, one claim after the other (reported per claim).
#[divan::bench]
fn check_mixed_per_claim(bencher: divan::Bencher) {
    bencher
        .counter(divan::counter::ItemsCount::new(PAIRS.len()))
        .bench(|| {
            for (claim, quotes) in PAIRS {
                divan::black_box(check_claim(
                    divan::black_box(claim),
                    divan::black_box(quotes),
                ));
            }
        });
}

/// A claim with no number: the common case, which never reads its quotes.
#[divan::bench]
fn check_claim_without_quantities(bencher: divan::Bencher) {
    let quotes: &[&str] = &["To change your password, open Settings and choose Security."];
    bencher.bench(|| {
        check_claim(
            divan::black_box("You can change your password under Settings, then Security."),
            divan::black_box(quotes),
        )
    });
}

/// Extraction alone on a long (~1 KB) paragraph.
#[divan::bench]
fn extract_paragraph(bencher: divan::Bencher) {
    let text = PAIRS
        .iter()
        .flat_map(|(c, q)| std::iter::once(*c).chain(q.iter().copied()))
        .collect::<Vec<_>>()
        .join(" ");
    bencher
        .counter(divan::counter::BytesCount::new(text.len()))
        .bench(|| extract(divan::black_box(&text)));
}
