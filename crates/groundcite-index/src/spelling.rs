//! Spelling correction of a question against the corpus's own words.
//!
//! People type "intrest" and "recieving"; BM25 finds no chunk with either,
//! and the sentence encoder reads them as other words. A question word is
//! read as a corpus word when all of these hold:
//!
//! - it is ASCII letters only, at least [`MIN_LEN`] long, and not
//!   capitalised past its first letter ("SQLite", "JSON" are names);
//! - it is not an English word (the SCOWL list, `data/english-words.txt`)
//!   and the corpus does not use it (its stem is in no chunk, title or
//!   heading): a real word the documents never use ("Antarctica", "car")
//!   is left alone, so an unanswerable question stays one;
//! - one edit away there is an English word the corpus uses: a letter
//!   swapped with its neighbour, inserted, replaced, or one of a doubled
//!   letter dropped; never the first letter, which people rarely mistype.
//!   Among several, the one in most chunks wins, then that edit order.
//!
//! [`Index::correct_spelling`](crate::Index::correct_spelling) applies it;
//! the caller records each [`Correction`] (the ask pipeline keeps them in
//! the request's trace).

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// English words of [`MIN_LEN`] letters or more, lower-cased (names too),
/// apostrophes dropped ("doesnt"), sorted bytewise: SCOWL's American and
/// British lists as Debian ships them (`scripts/wordlist`; notice in
/// `data/english-words.COPYRIGHT`).
static ENGLISH: &str = include_str!("../data/english-words.txt");

/// Shorter words are never corrected: one edit from a short word reaches
/// too many others ("car" and "card").
pub const MIN_LEN: usize = 5;

/// Longer words are left alone (a pasted identifier, a hash).
const MAX_LEN: usize = 30;

/// One question word read as another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Correction {
    /// The word as typed.
    pub from: String,
    /// The corpus word it was read as.
    pub to: String,
}

/// A question with its misspelt words replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corrected {
    /// The question as searched.
    pub text: String,
    /// What was replaced, in order of appearance.
    pub corrections: Vec<Correction>,
}

fn english() -> &'static [&'static str] {
    static WORDS: OnceLock<Vec<&'static str>> = OnceLock::new();
    WORDS.get_or_init(|| ENGLISH.lines().collect())
}

/// Whether `word` (lower-case) is in the English list.
pub fn is_english(word: &str) -> bool {
    english().binary_search(&word).is_ok()
}

/// The kinds of edit, in the order a tie is broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Edit {
    Transpose,
    Insert,
    Replace,
    DropDoubled,
}

/// Every word one edit from `word` (lower-case ASCII letters) that keeps
/// its first letter.
fn edits(word: &str) -> Vec<(Edit, String)> {
    let w = word.as_bytes();
    let n = w.len();
    let mut out = Vec::with_capacity(52 * n);
    let mut push = |kind, bytes: Vec<u8>| {
        // Only ASCII letters are ever spliced in, so this cannot fail.
        if let Ok(s) = String::from_utf8(bytes) {
            out.push((kind, s));
        }
    };
    for i in 1..n.saturating_sub(1) {
        if w[i] != w[i + 1] {
            let mut v = w.to_vec();
            v.swap(i, i + 1);
            push(Edit::Transpose, v);
        }
    }
    for i in 1..=n {
        for c in b'a'..=b'z' {
            let mut v = Vec::with_capacity(n + 1);
            v.extend_from_slice(&w[..i]);
            v.push(c);
            v.extend_from_slice(&w[i..]);
            push(Edit::Insert, v);
        }
    }
    for i in 1..n {
        for c in b'a'..=b'z' {
            if c != w[i] {
                let mut v = w.to_vec();
                v[i] = c;
                push(Edit::Replace, v);
            }
        }
    }
    for i in 1..n {
        if w[i] == w[i - 1] {
            let mut v = w.to_vec();
            v.remove(i);
            push(Edit::DropDoubled, v);
        }
    }
    out
}

/// Whether `word`, as it appears in the question, may be corrected at all
/// (before asking the corpus).
fn correctable(word: &str) -> bool {
    let len = word.len();
    (MIN_LEN..=MAX_LEN).contains(&len)
        && word.bytes().all(|b| b.is_ascii_alphabetic())
        && word.bytes().skip(1).all(|b| b.is_ascii_lowercase())
}

/// Corrects `text` word by word: `used(word)` is how many chunks use the
/// word (through the index's analyzer; 0 for a word it drops).
pub(crate) fn correct<E>(
    text: &str,
    mut used: impl FnMut(&str) -> Result<u64, E>,
) -> Result<Corrected, E> {
    let mut out = String::with_capacity(text.len());
    let mut corrections = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(|c: char| c.is_alphanumeric()) {
        out.push_str(&rest[..start]);
        let tail = &rest[start..];
        // A word runs over letters, digits and apostrophes ("don't" is one
        // word, and not a candidate).
        let end = tail
            .find(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '\u{2019}'))
            .unwrap_or(tail.len());
        let word = &tail[..end];
        rest = &tail[end..];
        let lower = word.to_ascii_lowercase();
        if !correctable(word) || is_english(&lower) || used(&lower)? > 0 {
            out.push_str(word);
            continue;
        }
        let mut best: Option<(u64, Edit, String)> = None;
        for (kind, candidate) in edits(&lower) {
            if !is_english(&candidate) {
                continue;
            }
            let n = used(&candidate)?;
            if n == 0 {
                continue;
            }
            let better = match &best {
                None => true,
                Some((bn, bk, bc)) => {
                    (n, std::cmp::Reverse(kind), std::cmp::Reverse(&candidate))
                        > (*bn, std::cmp::Reverse(*bk), std::cmp::Reverse(bc))
                }
            };
            if better {
                best = Some((n, kind, candidate));
            }
        }
        match best {
            Some((_, _, to)) => {
                let mut shown = to.clone();
                if word.starts_with(|c: char| c.is_ascii_uppercase()) {
                    shown[..1].make_ascii_uppercase();
                }
                out.push_str(&shown);
                corrections.push(Correction {
                    from: word.to_string(),
                    to: shown,
                });
            }
            None => out.push_str(word),
        }
    }
    out.push_str(rest);
    Ok(Corrected {
        text: out,
        corrections,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::convert::Infallible;

    fn corpus(words: &[(&str, u64)]) -> impl FnMut(&str) -> Result<u64, Infallible> {
        let map: BTreeMap<String, u64> = words.iter().map(|(w, n)| (w.to_string(), *n)).collect();
        move |w| Ok(map.get(w).copied().unwrap_or(0))
    }

    fn fix(text: &str, words: &[(&str, u64)]) -> Corrected {
        correct(text, corpus(words)).unwrap()
    }

    #[test]
    fn the_list_is_sorted_and_holds_only_what_may_be_corrected() {
        let w = english();
        assert!(w.len() > 50_000, "{}", w.len());
        assert!(w.windows(2).all(|p| p[0] < p[1]), "sorted, no duplicates");
        assert!(
            w.iter()
                .all(|x| x.len() >= MIN_LEN && x.bytes().all(|b| b.is_ascii_lowercase()))
        );
        for known in [
            "interest",
            "colour",
            "organise",
            "receiving",
            "login",
            "doesnt",
            "crete",
        ] {
            assert!(is_english(known), "{known}");
        }
        for typo in ["intrest", "recieving", "databse", "seperate"] {
            assert!(!is_english(typo), "{typo}");
        }
    }

    #[test]
    fn a_misspelt_word_becomes_the_corpus_word_one_edit_away() {
        let words = [("interest", 12), ("receiving", 3), ("database", 40)];
        let got = fix(
            "Whats the intrest rate when recieving money into my databse?",
            &words,
        );
        assert_eq!(
            got.text,
            "Whats the interest rate when receiving money into my database?"
        );
        let pairs: Vec<_> = got
            .corrections
            .iter()
            .map(|c| (c.from.as_str(), c.to.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("intrest", "interest"),
                ("recieving", "receiving"),
                ("databse", "database")
            ]
        );
    }

    #[test]
    fn real_words_the_corpus_never_uses_are_left_alone() {
        // "vaping" and "preset" are English; "numpy" is one edit from no
        // corpus word. An unanswerable question must stay as asked.
        let words = [("paging", 5), ("present", 9), ("number", 30)];
        for q in [
            "can i be vaping at my desk",
            "is there a preset for it",
            "does it do numpy",
        ] {
            let got = fix(q, &words);
            assert_eq!(got.text, q);
            assert!(got.corrections.is_empty());
        }
    }

    #[test]
    fn contractions_typed_without_the_apostrophe_and_names_are_words() {
        // "theres" is one edit from "themes"; "crete" from "create".
        let words = [("themes", 5), ("create", 9)];
        for q in ["what if theres no terminal", "on holiday in crete"] {
            assert!(fix(q, &words).corrections.is_empty(), "{q}");
        }
    }

    #[test]
    fn words_the_corpus_uses_are_never_touched_even_if_not_english() {
        let got = fix(
            "how does sqlite handle fsync",
            &[("sqlite", 5), ("fsync", 2), ("sqlites", 1)],
        );
        assert!(got.corrections.is_empty(), "{got:?}");
    }

    #[test]
    fn short_names_and_the_first_letter_are_never_changed() {
        // "acct" is too short; "JSONB" and "SQLlite" are capitalised past the
        // first letter.
        let words = [("account", 9), ("jsonbs", 2), ("sqlite", 4)];
        let got = fix("my acct JSONB SQLlite", &words);
        assert_eq!(got.text, "my acct JSONB SQLlite");
        // "werms" -> "terms" would change the first letter.
        let got = fix("what werms does it need", &[("terms", 9)]);
        assert!(got.corrections.is_empty(), "{got:?}");
    }

    #[test]
    fn the_more_used_candidate_wins_and_capitals_are_kept() {
        let words = [("personal", 35), ("personnel", 3)];
        let got = fix("Personel files", &words);
        assert_eq!(got.text, "Personal files");
        assert_eq!(got.corrections[0].from, "Personel");
        assert_eq!(got.corrections[0].to, "Personal");
    }

    #[test]
    fn a_dropped_letter_is_only_ever_one_of_a_doubled_pair() {
        // "untill" -> "until" drops a doubled letter; "quickley" -> "quickly"
        // would drop a single one, and is not offered: an added letter is a
        // rarer slip than a missing one, and dropping one turns real words
        // the list lacks into others ("manpage" -> "manage").
        assert_eq!(
            fix("wait untill friday", &[("until", 4)]).text,
            "wait until friday"
        );
        assert!(
            fix("how quickley", &[("quickly", 4)])
                .corrections
                .is_empty()
        );
    }

    proptest::proptest! {
        /// No input panics; text with nothing corrected comes back as it
        /// was, and every correction's word was in the input.
        #[test]
        fn any_text_is_safe(
            text in "\\PC{0,80}|((intrest|acount|Recieving|interest|[a-z]{1,6})[ ,.'?]){0,12}"
        ) {
            let got = fix(&text, &[("interest", 3), ("account", 2), ("receiving", 1)]);
            if got.corrections.is_empty() {
                proptest::prop_assert_eq!(&got.text, &text);
            }
            for c in &got.corrections {
                proptest::prop_assert!(text.contains(&c.from));
                proptest::prop_assert!(got.text.contains(&c.to));
            }
        }
    }

    #[test]
    fn odd_text_passes_through_unchanged() {
        for q in [
            "",
            "   ",
            "¿qué?",
            "日本語のテキスト",
            "a\u{0}b",
            "don't won't",
            "x".repeat(100).as_str(),
        ] {
            assert_eq!(fix(q, &[("dont", 3)]).text, q);
        }
    }
}
