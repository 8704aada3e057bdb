//! The quantity check (issue 9) against its labelled corpus
//! (`testdata/quantity/*.toml`), the documented tables, and fuzzing.
//!
//! `cargo test -p groundcite-core --test quantity_corpus -- --nocapture`
//! prints precision and recall of `unsupported_quantity`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use groundcite_core::quantity::{
    self, APPROXIMATE_MARKERS, ARTICLE_PREPOSITIONS, BOUNDS_AFTER, BOUNDS_BEFORE,
    CURRENCY_PREFIXES, ID_WORDS, MONTHS, NON_QUANTITY_COMPOUNDS, NUMBER_WORDS, ORDINAL_WORDS,
    PERIOD_NOUNS, SCALE_WORDS, Side, TIME_FOLLOWERS, UNITS, WHOLE_WORDS, check_claim,
};
use proptest::prelude::*;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CorpusFile {
    #[serde(default)]
    case: Vec<Case>,
    #[serde(default)]
    miss: Vec<KnownMiss>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    id: String,
    claim: String,
    quotes: Vec<String>,
    consistent: bool,
    #[serde(default)]
    unsupported: Vec<String>,
    #[serde(default)]
    #[allow(dead_code)]
    note: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct KnownMiss {
    id: String,
    reason: String,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn load() -> (Vec<(String, Case)>, BTreeMap<String, String>) {
    let dir = root().join("testdata/quantity");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("corpus directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    let mut misses = BTreeMap::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("corpus file");
        let parsed: CorpusFile =
            toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let name = f
            .file_name()
            .expect("file name")
            .to_string_lossy()
            .into_owned();
        for c in parsed.case {
            cases.push((name.clone(), c));
        }
        for m in parsed.miss {
            assert!(
                misses.insert(m.id.clone(), m.reason).is_none(),
                "known miss {} listed twice",
                m.id
            );
        }
    }
    (cases, misses)
}

/// Whether two descriptions of a quantity overlap ("2-4 business days" vs "4 business days").
fn overlaps(a: &str, b: &str) -> bool {
    let (a, b) = (a.to_lowercase(), b.to_lowercase());
    a.contains(&b) || b.contains(&a)
}

#[derive(Default)]
struct Counts {
    tp: usize,
    fp: usize,
    fn_: usize,
    tn: usize,
}

impl Counts {
    fn precision(&self) -> f64 {
        if self.tp + self.fp == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fp) as f64
        }
    }
    fn recall(&self) -> f64 {
        if self.tp + self.fn_ == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fn_) as f64
        }
    }
}

#[test]
fn corpus_labels_hold() {
    let (cases, misses) = load();
    assert!(
        cases.len() >= 150,
        "the corpus needs at least 150 pairs, has {}",
        cases.len()
    );
    let mut ids = BTreeSet::new();
    for (_, c) in &cases {
        assert!(ids.insert(c.id.clone()), "duplicate case id {}", c.id);
        assert!(!c.quotes.is_empty(), "{}: no quotes", c.id);
        assert_eq!(
            c.consistent,
            c.unsupported.is_empty(),
            "{}: an inconsistent case lists its unsupported quantities, a consistent one none",
            c.id
        );
    }
    for id in misses.keys() {
        assert!(ids.contains(id), "known miss {id} is not a corpus case");
    }

    let mut pairs = Counts::default();
    let mut per_file: BTreeMap<String, Counts> = BTreeMap::new();
    let mut quantities = Counts::default();
    let mut failures = Vec::new();
    let mut still_missed = Vec::new();
    let mut fixed_misses = Vec::new();
    for (file, c) in &cases {
        let quotes: Vec<&str> = c.quotes.iter().map(String::as_str).collect();
        let check = check_claim(&c.claim, &quotes);
        let flagged: Vec<&str> = check.unsupported.iter().map(|q| q.text.as_str()).collect();

        // Pair level.
        let f = per_file.entry(file.clone()).or_default();
        match (c.consistent, flagged.is_empty()) {
            (true, true) => (pairs.tn += 1, f.tn += 1),
            (true, false) => (pairs.fp += 1, f.fp += 1),
            (false, false) => (pairs.tp += 1, f.tp += 1),
            (false, true) => (pairs.fn_ += 1, f.fn_ += 1),
        };
        // Quantity level: an expected quantity is found when a flag overlaps it.
        let mut ok = c.consistent == flagged.is_empty();
        for e in &c.unsupported {
            if flagged.iter().any(|f| overlaps(f, e)) {
                quantities.tp += 1;
            } else {
                quantities.fn_ += 1;
                ok = false;
            }
        }
        for f in &flagged {
            if !c.unsupported.iter().any(|e| overlaps(f, e)) {
                quantities.fp += 1;
                ok = false;
            }
        }
        let asserted: Vec<String> = check.asserted.iter().map(ToString::to_string).collect();
        let line = format!(
            "{file} {}: label consistent={} expected {:?}, flagged {:?}\n    claim: {:?}\n    asserted: {asserted:?}",
            c.id, c.consistent, c.unsupported, flagged, c.claim
        );
        match (ok, misses.get(&c.id)) {
            (true, None) => {}
            (false, None) => failures.push(line),
            (false, Some(reason)) => still_missed.push(format!("{} ({reason})", c.id)),
            (true, Some(_)) => fixed_misses.push(c.id.clone()),
        }
    }

    println!("quantity corpus: {} claim/quote pairs", cases.len());
    println!(
        "  pairs      (flagged = any unsupported_quantity): TP {} FP {} FN {} TN {} -> precision {:.3}, recall {:.3}",
        pairs.tp,
        pairs.fp,
        pairs.fn_,
        pairs.tn,
        pairs.precision(),
        pairs.recall()
    );
    println!(
        "  quantities (each expected vs each flagged):       TP {} FP {} FN {}    -> precision {:.3}, recall {:.3}",
        quantities.tp,
        quantities.fp,
        quantities.fn_,
        quantities.precision(),
        quantities.recall()
    );
    for (file, f) in &per_file {
        println!(
            "    {file:<18} {:>3} pairs: TP {:>3} FP {} FN {} TN {:>3}",
            f.tp + f.fp + f.fn_ + f.tn,
            f.tp,
            f.fp,
            f.fn_,
            f.tn
        );
    }
    println!("  known misses: {}", misses.len());
    for m in &still_missed {
        println!("    {m}");
    }

    assert!(
        failures.is_empty(),
        "{} case(s) disagree with their label:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        fixed_misses.is_empty(),
        "these known misses now pass; remove them from known_misses.toml: {fixed_misses:?}"
    );
    assert_eq!(
        pairs.fp, 0,
        "a consistent pair was flagged: the bar is no false drop"
    );
}

#[test]
fn documented_tables_match_the_code() {
    let doc = std::fs::read_to_string(root().join("docs/quantities.md")).unwrap();
    let mut missing = Vec::new();
    let mut check = |w: &str| {
        if !doc.contains(&format!("`{w}`")) {
            missing.push(w.to_string());
        }
    };
    for u in UNITS {
        check(u.spelling);
    }
    for (p, _) in CURRENCY_PREFIXES {
        check(p);
    }
    for (w, _) in NUMBER_WORDS {
        check(w);
    }
    for (w, _) in SCALE_WORDS {
        check(w);
    }
    for (w, _) in ORDINAL_WORDS {
        check(w);
    }
    for (w, _) in MONTHS {
        check(w);
    }
    for (w, _) in BOUNDS_BEFORE.iter().chain(BOUNDS_AFTER) {
        check(w);
    }
    for w in ID_WORDS
        .iter()
        .chain(NON_QUANTITY_COMPOUNDS)
        .chain(PERIOD_NOUNS)
        .chain(APPROXIMATE_MARKERS)
        .chain(ARTICLE_PREPOSITIONS)
        .chain(TIME_FOLLOWERS)
        .chain(WHOLE_WORDS)
    {
        check(w);
    }
    assert!(
        missing.is_empty(),
        "docs/quantities.md does not list these spellings of the code's tables: {missing:?}"
    );
}

#[test]
fn spans_cover_the_written_quantity() {
    for q in
        quantity::extract("Refunds within thirty (30) days cost €5.50, about 12% of $1.5 million.")
    {
        assert!(!q.text.is_empty());
    }
    let qs = quantity::extract("Pay €50 within 2 weeks.");
    let texts: Vec<&str> = qs.iter().map(|q| q.text.as_str()).collect();
    assert_eq!(texts, ["€50", "2 weeks"]);
}

fn vocabulary() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "1", "2", "30", "1,000", "2026", "11", "0", "007", "3.5", "1.2.3", "12", "-", "–", "/",
        ":", ".", ",", "(", ")", "[", "]", "#", "+", "$", "€", "£", "¥", "%", "°", "½", " ", "  ",
        "\n", "\u{a0}", "days", "day", "week", "a", "an", "one", "thirty", "twenty", "first",
        "second", "third", "quarter", "half", "dozen", "hundred", "and", "million", "k", "mg",
        "GB", "am", "p.m.", "o'clock", "November", "Nov", "May", "Q", "FY", "version", "v", "st",
        "th", "to", "or", "every", "per", "twice", "once", "noon", "about", "x", "é", "ß",
        "\u{301}", "日本", "🙂", "\u{200b}", "¹",
    ]);
    prop::collection::vec(pieces, 0..40).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 768,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn extract_never_panics_and_spans_are_boundaries(text in "\\PC{0,120}") {
        for side in [Side::Claim, Side::Quote] {
            for q in quantity::extract_as(&text, side) {
                prop_assert!(q.span.start <= q.span.end && q.span.end <= text.len());
                prop_assert!(text.is_char_boundary(q.span.start) && text.is_char_boundary(q.span.end));
                prop_assert_eq!(&text[q.span.clone()], q.text.as_str());
            }
        }
        let _ = check_claim(&text, &[text.as_str()]);
    }

    #[test]
    fn extract_on_number_soup(text in vocabulary(), quote in vocabulary()) {
        for side in [Side::Claim, Side::Quote] {
            for q in quantity::extract_as(&text, side) {
                prop_assert!(text.is_char_boundary(q.span.start) && text.is_char_boundary(q.span.end));
                prop_assert!(q.span.start <= q.span.end && q.span.end <= text.len());
                let _ = q.canonical();
            }
        }
        let check = check_claim(&text, &[quote.as_str()]);
        prop_assert!(check.unsupported.len() <= check.asserted.len());
        // A claim is always consistent with itself as its quote.
        let own = check_claim(&text, &[text.as_str()]);
        prop_assert!(own.is_consistent(), "{:?} vs itself: {:?}", text, own.unsupported);
    }
}
