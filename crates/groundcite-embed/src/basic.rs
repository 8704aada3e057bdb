//! BERT's basic (pre-WordPiece) tokenization of uncased models, exactly as
//! Hugging Face's `BertNormalizer` (clean text, CJK, strip accents,
//! lower-case) and `BertPreTokenizer` (white space, punctuation) do it.
//!
//! The character classes come from the `unicode_categories` crate, the very
//! tables Hugging Face's `tokenizers` uses, so that "control", "punctuation"
//! and "non-spacing mark" agree with the reference character for character
//! (its tables predate some recent Unicode additions; matching them is the
//! point).

use std::ops::ControlFlow;

use unicode_categories::UnicodeCategories;
use unicode_normalization::UnicodeNormalization;

/// Dropped by the text cleaning: NUL, U+FFFD and "other" characters (Cc, Cf,
/// Co) except tab, line feed and carriage return, which are white space.
fn is_dropped(c: char) -> bool {
    match c {
        '\t' | '\n' | '\r' => false,
        '\0' | '\u{FFFD}' => true,
        _ => c.is_other(),
    }
}

/// Separates words (after cleaning, every one of these becomes a space).
fn is_whitespace(c: char) -> bool {
    c.is_whitespace()
}

/// A "Chinese character" in BERT's sense: the CJK Unified Ideographs blocks
/// and their extensions and compatibility forms (the ranges of Hugging
/// Face's `BertNormalizer`, which differ from the original Python code in
/// starting extension E at U+2B920). Each stands as a word of its own.
fn is_chinese(c: char) -> bool {
    matches!(
        u32::from(c),
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B920..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}

/// Punctuation splits words and stands alone: ASCII punctuation (every
/// printable ASCII character that is neither a letter, a digit nor a space:
/// `$`, `+`, `<`, `^`, `` ` ``, `|`, `~` too) and the Unicode P* categories.
fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || c.is_punctuation()
}

/// Calls `f` with each word of `text` after normalization, in order, until
/// `f` breaks.
///
/// Normalization: cleaning (see [`is_dropped`]), white space as separator,
/// Chinese characters split out, then per word NFD with the non-spacing
/// marks (Mn) removed and a per-character lower-casing (no final-sigma
/// rule), then splitting on punctuation. Words are never empty.
pub(crate) fn for_each_word(
    text: &str,
    f: &mut dyn FnMut(&str) -> ControlFlow<()>,
) -> ControlFlow<()> {
    // Words are normalized one at a time: nothing normalization does crosses
    // a space (NFD's reordering only moves combining marks past each other),
    // so this equals normalizing the whole text first, and an early stop
    // skips the rest of a long text.
    let mut raw = String::new();
    let mut normalized = String::new();
    for c in text.chars() {
        if is_dropped(c) {
            continue;
        }
        if is_whitespace(c) {
            emit(&mut raw, &mut normalized, f)?;
        } else if is_chinese(c) {
            emit(&mut raw, &mut normalized, f)?;
            raw.push(c);
            emit(&mut raw, &mut normalized, f)?;
        } else {
            raw.push(c);
        }
    }
    emit(&mut raw, &mut normalized, f)
}

/// Normalizes the run of non-space characters in `raw` (then clears it) and
/// calls `f` with its punctuation-split pieces.
fn emit(
    raw: &mut String,
    normalized: &mut String,
    f: &mut dyn FnMut(&str) -> ControlFlow<()>,
) -> ControlFlow<()> {
    if raw.is_empty() {
        return ControlFlow::Continue(());
    }
    normalized.clear();
    if raw.is_ascii() {
        // NFD is the identity on ASCII and ASCII has no combining marks.
        normalized.extend(raw.chars().map(|c| c.to_ascii_lowercase()));
    } else {
        for c in raw.nfd().filter(|c| !c.is_mark_nonspacing()) {
            normalized.extend(c.to_lowercase());
        }
    }
    raw.clear();
    let mut start = 0;
    for (i, c) in normalized.char_indices() {
        if is_punctuation(c) {
            if start < i {
                f(&normalized[start..i])?;
            }
            let end = i + c.len_utf8();
            f(&normalized[i..end])?;
            start = end;
        }
    }
    if start < normalized.len() {
        f(&normalized[start..])?;
    }
    ControlFlow::Continue(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let _ = for_each_word(text, &mut |w| {
            out.push(w.to_owned());
            ControlFlow::Continue(())
        });
        out
    }

    #[test]
    fn cleans_splits_and_lowercases() {
        assert_eq!(
            words("Hey friend!  How?!"),
            ["hey", "friend", "!", "how", "?", "!"]
        );
        // Vertical tab and NEL are control characters: dropped, joining.
        assert_eq!(words("a\u{b}b a\u{85}b a\u{a0}b"), ["ab", "ab", "a", "b"]);
        assert_eq!(words("Ünïcödé café"), ["unicode", "cafe"]);
        assert_eq!(words("野口 x"), ["野", "口", "x"]);
        assert_eq!(words("$14.95"), ["$", "14", ".", "95"]);
        assert_eq!(words("\u{F8FF}\0\u{FFFD}"), Vec::<String>::new());
        assert!(words(" \t\n ").is_empty());
    }

    #[test]
    fn stops_when_asked() {
        let mut seen = 0;
        let flow = for_each_word("a b c d", &mut |_| {
            seen += 1;
            if seen == 2 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        assert!(flow.is_break());
        assert_eq!(seen, 2);
    }
}
