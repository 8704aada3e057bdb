//! Property tests of the matching rule and the verifier.

// Test helpers outside #[test] functions unwrap too: a failure is a test failure.
#![allow(clippy::unwrap_used)]

use groundcite_core::{
    Chunk, ChunkSet, Citation, Claim, GroundedAnswer, MatchKind, MatchProfile, Provenance,
    QuoteVerdict, find_quote, normalize, verify,
};
use proptest::prelude::*;

/// Characters that stress the rule: ASCII, every white space and curly-quote
/// variant, expanding case folds, combining marks, ligatures, invisibles,
/// dashes, astral characters.
fn tricky_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => proptest::char::range('a', 'z'),
        2 => proptest::char::range('A', 'Z'),
        1 => proptest::char::range('0', '9'),
        2 => Just(' '),
        1 => prop::sample::select(vec![
            '\t', '\n', '\r', '\u{0B}', '\u{0C}', '\u{85}', '\u{A0}', '\u{1680}', '\u{2009}',
            '\u{2028}', '\u{202F}', '\u{205F}', '\u{3000}',
        ]),
        1 => prop::sample::select(vec![
            '\u{2018}', '\u{2019}', '\u{201A}', '\u{201B}', '\u{2032}', '\u{201C}', '\u{201D}',
            '\u{201E}', '\u{201F}', '\u{2033}', '\'', '"',
        ]),
        1 => prop::sample::select(vec![
            'ß', 'ẞ', 'İ', 'ı', 'Σ', 'ς', 'σ', 'É', 'é', 'ŉ', 'ǰ', 'ﬁ', 'ﬀ', 'ﬆ', '\u{301}',
            '\u{308}', '\u{327}', '\u{AD}', '\u{200B}', '\u{200D}', '\u{FEFF}', '–', '—', '‐',
            '−', '…', '¨', '²', 'Ａ', 'ｂ', '가', '\u{1161}', '\u{11A8}', 'ᄀ', '🙂', '𝟘', '.',
            ',', '-',
        ]),
    ]
}

fn tricky_string(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(tricky_char(), 0..max).prop_map(|v| v.into_iter().collect())
}

fn profile() -> impl Strategy<Value = MatchProfile> {
    prop_oneof![Just(MatchProfile::Default), Just(MatchProfile::Lenient)]
}

/// Perturbations models make that the default rule absorbs.
fn perturb(s: &str, seed: u64) -> String {
    let mut out = String::new();
    let mut x = seed | 1;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for c in s.chars() {
        let r = next() % 8;
        match c {
            'a'..='z' if r == 0 => out.push(c.to_ascii_uppercase()),
            'A'..='Z' if r == 0 => out.push(c.to_ascii_lowercase()),
            '\u{2019}' if r < 4 => out.push('\''),
            '\u{201C}' | '\u{201D}' if r < 4 => out.push('"'),
            c if c.is_whitespace() && r < 3 => out.push_str(" \n "),
            c if c.is_whitespace() && r < 5 => out.push('\u{A0}'),
            _ => out.push(c),
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Whatever the inputs, a match satisfies the span invariant:
    /// normalize(source_text) == normalize(quote), and the span slices the
    /// original to exactly the reported bytes.
    #[test]
    fn every_match_satisfies_the_invariant(chunk in tricky_string(60), quote in tricky_string(12), p in profile()) {
        if let QuoteVerdict::Found(m) = find_quote(&chunk, &quote, p) {
            let text = m.span.slice(&chunk).expect("span inside chunk");
            prop_assert_eq!(text, &chunk[m.bytes.clone()]);
            prop_assert_eq!(normalize(text, p), normalize(&quote, p));
            if m.kind == MatchKind::Exact {
                prop_assert_eq!(text, quote.as_str());
            }
        }
    }

    /// Quoting the normalized form of a piece of the chunk exercises the
    /// normalized path (and its span map) under both profiles.
    #[test]
    fn normalized_quotes_satisfy_the_invariant(chunk in tricky_string(60), a in any::<prop::sample::Index>(), len in 1usize..30, p in profile()) {
        let chars: Vec<char> = chunk.chars().collect();
        prop_assume!(!chars.is_empty());
        let a = a.index(chars.len());
        let end = (a + len).min(chars.len());
        let piece: String = chars[a..end].iter().collect();
        let quote = normalize(&piece, p).to_uppercase();
        if let QuoteVerdict::Found(m) = find_quote(&chunk, &quote, p) {
            let text = m.span.slice(&chunk).expect("span inside chunk");
            prop_assert_eq!(text, &chunk[m.bytes.clone()]);
            prop_assert_eq!(normalize(text, p), normalize(&quote, p));
        }
    }

    /// A substring of the chunk is always found, byte for byte.
    #[test]
    fn substrings_are_found_exactly(chunk in tricky_string(60), a in any::<prop::sample::Index>(), len in 1usize..30, p in profile()) {
        let chars: Vec<char> = chunk.chars().collect();
        prop_assume!(!chars.is_empty());
        let a = a.index(chars.len());
        let end = (a + len).min(chars.len());
        let quote: String = chars[a..end].iter().collect();
        prop_assume!(normalize(&quote, p).chars().any(char::is_alphanumeric));
        match find_quote(&chunk, &quote, p) {
            QuoteVerdict::Found(m) => prop_assert_eq!(m.kind, MatchKind::Exact),
            other => prop_assert!(false, "{:?} not found: {:?}", quote, other),
        }
    }

    /// A substring perturbed the way models perturb quotes (ASCII case, curly
    /// quotes, white-space runs) is still found under the default rule, whose
    /// units are single code points, so any substring is unit-aligned.
    #[test]
    fn perturbed_substrings_are_found(chunk in tricky_string(60), a in any::<prop::sample::Index>(), len in 1usize..30, seed in any::<u64>()) {
        let chars: Vec<char> = chunk.chars().collect();
        prop_assume!(!chars.is_empty());
        let a = a.index(chars.len());
        let end = (a + len).min(chars.len());
        let original: String = chars[a..end].iter().collect();
        let quote = perturb(&original, seed);
        let p = MatchProfile::Default;
        prop_assume!(normalize(&quote, p).chars().any(char::is_alphanumeric));
        // Case-folding a character can depend on the cut (e.g. half of a
        // combining sequence); only claim completeness when normalization of
        // the piece equals normalization of the perturbed quote.
        prop_assume!(normalize(&original, p) == normalize(&quote, p));
        prop_assert!(matches!(find_quote(&chunk, &quote, p), QuoteVerdict::Found(_)), "{:?} in {:?}", quote, chunk);
    }

    /// The verifier never panics and its contract keeps its promises.
    #[test]
    fn verifier_keeps_its_promises(
        contents in prop::collection::vec(tricky_string(40), 1..5),
        claims in prop::collection::vec(
            (tricky_string(10), prop::collection::vec((0usize..7, tricky_string(10), any::<bool>()), 0..4)),
            0..5),
        answerable in any::<bool>(),
        p in profile(),
    ) {
        let chunks: Vec<Chunk> = contents.iter().enumerate().map(|(i, c)| Chunk {
            chunk_id: format!("c{i}"), content: c.clone(), source_title: None,
            source_url: None, page_number: None, score: None,
        }).collect();
        let answer = GroundedAnswer {
            answerable,
            claims: claims.iter().map(|(text, cits)| Claim {
                text: text.clone(),
                citations: cits.iter().map(|(i, q, from_chunk)| {
                    let id = format!("c{i}");
                    // Half the time quote a real piece of the chunk.
                    let quote = match (from_chunk, contents.get(*i)) {
                        (true, Some(c)) => c.chars().skip(q.len() % 5).take(8).collect(),
                        _ => q.clone(),
                    };
                    Citation { chunk_id: id, quote }
                }).collect(),
            }).collect(),
        };
        let set = ChunkSet::new(chunks).unwrap();
        let c = verify(&answer, &set, p, Provenance {
            trace_id: "t".into(), created_at: "2026-11-30T00:00:00Z".into(), question: None, model: None,
        });
        prop_assert_eq!(c.answerable, c.refusal.is_none());
        prop_assert_eq!(c.answerable, !c.claims.is_empty());
        if !answerable { prop_assert!(c.claims.is_empty()); }
        let refs: Vec<usize> = c.sources.iter().map(|s| s.reference).collect();
        prop_assert_eq!(refs, (1..=c.sources.len()).collect::<Vec<_>>());
        let mut seen_max = 0;
        for claim in &c.claims {
            prop_assert!(!claim.citations.is_empty());
            for cit in &claim.citations {
                let chunk = set.get(&cit.chunk_id).expect("cited chunk was retrieved");
                let st = cit.source_text.as_deref().unwrap();
                prop_assert_eq!(cit.span.unwrap().slice(&chunk.content), Some(st));
                // A table header is the chunk's own text, above the quote.
                if let Some(h) = &cit.table_header {
                    prop_assert_eq!(h.span.slice(&chunk.content), Some(h.source_text.as_str()));
                    prop_assert!(h.span.end() <= cit.span.unwrap().start());
                }
                prop_assert_eq!(normalize(st, p), normalize(cit.quote.as_deref().unwrap(), p));
                prop_assert_eq!(&c.sources[cit.reference - 1].chunk_id, &cit.chunk_id);
                // Refs are numbered in order of first citation.
                prop_assert!(cit.reference <= seen_max + 1);
                seen_max = seen_max.max(cit.reference);
            }
        }
    }
}

/// Lines of Markdown-like text: running words, list items, headings, table
/// rows, fences, blank lines, numbered items, tricky characters.
fn markdown_text() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        4 => tricky_string(40),
        1 => tricky_string(20).prop_map(|s| format!("- {s}")),
        1 => tricky_string(20).prop_map(|s| format!("12. {s}")),
        1 => tricky_string(20).prop_map(|s| format!("## {s}")),
        1 => tricky_string(20).prop_map(|s| format!("| {s} |")),
        1 => Just("```".to_string()),
        1 => Just(String::new()),
        1 => Just("a. b. c.".to_string()),
    ];
    prop::collection::vec(line, 0..12).prop_map(|v| v.join("\n"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The sentence rule cuts text into pieces that concatenate back, none
    /// empty, and a sentence holds a line break only where running text
    /// continues: never before a heading, list item or table row.
    #[test]
    fn sentences_tile_the_text(t in markdown_text()) {
        let spans = groundcite_core::sentences::sentence_spans(&t);
        let mut at = 0;
        for r in &spans {
            prop_assert_eq!(r.start, at);
            prop_assert!(r.end > r.start);
            at = r.end;
            let inner = t[r.clone()].trim_end();
            for next in inner.split('\n').skip(1) {
                let n = next.trim_start();
                prop_assert!(!n.is_empty() && !n.starts_with('#') && !n.starts_with('|')
                    && !n.starts_with("- ") && !n.starts_with("```"), "{:?} in {:?}", next, inner);
            }
        }
        prop_assert_eq!(at, t.len());
    }
}

/// Lines of Markdown tables among other text: rows, delimiter rows (with
/// and without outer pipes), blank lines, running text.
fn table_text() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        3 => tricky_string(12).prop_map(|s| format!("| {s} |")),
        2 => Just("|---|:--:|".to_string()),
        1 => Just("--- | ---".to_string()),
        1 => tricky_string(12).prop_map(|s| format!("{s} | x")),
        1 => tricky_string(20),
        1 => Just(String::new()),
    ];
    prop::collection::vec(line, 0..14).prop_map(|v| v.join("\n"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// For any byte of any text, a table header found is a trimmed line
    /// with a `|`, above the byte's line, directly over a delimiter row.
    #[test]
    fn a_table_header_is_a_row_over_a_delimiter_above_the_quote(t in table_text(), at in 0usize..400) {
        let Some(r) = groundcite_core::sentences::table_header(&t, at) else {
            return Ok(());
        };
        let h = t.get(r.clone()).expect("on char boundaries");
        prop_assert!(h.contains('|') && h == h.trim() && !h.is_empty());
        let line_start = t[..at.min(t.len())].rfind('\n').map_or(0, |i| i + 1);
        prop_assert!(r.end < line_start);
        let next = t[r.end..].split('\n').nth(1).unwrap_or("").trim();
        prop_assert!(next.contains('-') && next.contains('|'), "{:?} under {:?}", next, h);
        prop_assert!(next.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t')));
    }
}
