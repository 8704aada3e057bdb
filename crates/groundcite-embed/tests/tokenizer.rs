//! The tokenizer against Hugging Face's (fixtures from
//! `testdata/embed/gen_fixtures.py`), and properties on arbitrary text.
//! Needs the model's `vocab.txt`: run `scripts/setup` first.

#![allow(clippy::unwrap_used)]

use std::sync::OnceLock;

use groundcite_embed::{Tokenizer, find_model};
use proptest::prelude::*;
use serde::Deserialize;

const TOKENS: &str = include_str!("../../../testdata/embed/tokens.json");
const MAX_TOKENS: usize = 256;

#[derive(Deserialize)]
struct Case {
    text: String,
    ids: Vec<u32>,
    ids_truncated: Option<Vec<u32>>,
}

fn tokenizer() -> &'static Tokenizer {
    static T: OnceLock<Tokenizer> = OnceLock::new();
    T.get_or_init(|| {
        let dir = find_model(None).unwrap_or_else(|e| panic!("{e}"));
        Tokenizer::from_vocab_file(&dir.join("vocab.txt")).unwrap_or_else(|e| panic!("{e}"))
    })
}

#[test]
fn ids_equal_hugging_face() {
    let cases: Vec<Case> = serde_json::from_str(TOKENS).unwrap();
    assert!(cases.len() >= 40, "only {} cases", cases.len());
    let t = tokenizer();
    let mut failures = Vec::new();
    for case in &cases {
        let ids = t.encode(&case.text);
        if ids != case.ids {
            failures.push(format!(
                "{:?}\n  want {:?}\n  got  {:?}",
                case.text, case.ids, ids
            ));
        }
        let want = case.ids_truncated.as_ref().unwrap_or(&case.ids);
        let truncated = t.encode_truncated(&case.text, MAX_TOKENS);
        if &truncated != want {
            failures.push(format!(
                "{:?} truncated to {MAX_TOKENS}: got {truncated:?}",
                case.text
            ));
        }
        assert_eq!(t.count(&case.text), case.ids.len(), "{:?}", case.text);
    }
    assert!(
        cases.iter().any(|c| c.ids_truncated.is_some()),
        "no case exercises truncation"
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn special_ids() {
    let t = tokenizer();
    assert_eq!(t.vocab_size(), 30522);
    assert_eq!(
        (t.pad_id(), t.unk_id(), t.cls_id(), t.sep_id()),
        (0, 100, 101, 102)
    );
    let debug = format!("{t:?}");
    assert!(debug.len() < 200, "{debug}");
}

#[test]
fn huge_text_is_cut_early() {
    let t = tokenizer();
    let text = "word, ".repeat(1_000_000);
    let ids = t.encode_truncated(&text, MAX_TOKENS);
    assert_eq!(ids.len(), MAX_TOKENS);
    assert_eq!(ids[0], t.cls_id());
    assert_eq!(ids[MAX_TOKENS - 1], t.sep_id());
    assert_eq!(t.count(&text), 2_000_002);
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        proptest::collection::vec(any::<u8>(), 0..600)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        "[ \\t\\n\\[\\]A-Za-z0-9.,!?$%#@'\"()\\-–—…é野😀\u{0}\u{85}\u{200b}\u{fffd}\u{0301}]{0,400}",
        "(\\[(CLS|SEP|PAD|UNK|MASK|cls)\\]| |a|##|x){0,60}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn never_more_than_max_tokens(s in text(), max in 0usize..300) {
        let t = tokenizer();
        let full = t.encode(&s);
        let cut = t.encode_truncated(&s, max);
        prop_assert!(cut.len() <= max.max(2));
        prop_assert_eq!(cut.len(), full.len().min(max.max(2)));
        prop_assert_eq!(cut[0], t.cls_id());
        prop_assert_eq!(*cut.last().unwrap(), t.sep_id());
        prop_assert_eq!(&cut[..cut.len() - 1], &full[..cut.len() - 1]);
        prop_assert_eq!(t.count(&s), full.len());
        prop_assert!(full.iter().all(|&id| (id as usize) < t.vocab_size()));
    }
}
