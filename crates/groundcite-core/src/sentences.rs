//! The one sentence rule: how source text is cut into the units a quote of
//! the embedded model covers, a candidate quote is ranked by, and an
//! extractive claim states. Used by the index (sentence vectors), the
//! ranker of candidate quotes and the decoding grammar, so the three always
//! agree on what a sentence is.

use std::ops::Range;

/// Splits text into sentences, each with the white space that follows it:
/// a sentence ends after `.`, `!` or `?` (and any closing quotes or
/// brackets) followed by white space, or at a line break. Concatenating the
/// pieces gives `text` back.
pub fn sentences(text: &str) -> Vec<&str> {
    sentence_spans(text).into_iter().map(|r| &text[r]).collect()
}

/// The byte ranges of [`sentences`].
pub fn sentence_spans(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let mut end = None;
        if c == '\n' {
            end = Some(i + 1);
        } else if matches!(c, '.' | '!' | '?') {
            let mut j = i + c.len_utf8();
            while let Some(&(k, d)) = chars.peek() {
                if matches!(d, '"' | '\'' | ')' | ']' | '\u{201D}' | '\u{2019}') {
                    chars.next();
                    j = k + d.len_utf8();
                } else {
                    break;
                }
            }
            if chars.peek().is_none_or(|&(_, d)| d.is_whitespace()) {
                end = Some(j);
            }
        }
        if let Some(mut e) = end {
            // The white space after a sentence belongs to it.
            while let Some(&(k, d)) = chars.peek() {
                if d.is_whitespace() {
                    chars.next();
                    e = k + d.len_utf8();
                } else {
                    break;
                }
            }
            out.push(start..e);
            start = e;
        }
    }
    if start < text.len() {
        out.push(start..text.len());
    }
    out
}

/// Splits text into runs of word characters (alphanumeric or `_`), of
/// white space, and single other characters; a quote may start and end at
/// any piece boundary. Concatenating the pieces gives `text` back.
pub fn word_pieces(text: &str) -> Vec<&str> {
    #[derive(PartialEq, Clone, Copy)]
    enum Class {
        Word,
        Space,
        Other,
    }
    fn class(c: char) -> Class {
        if c.is_whitespace() {
            Class::Space
        } else if c.is_alphanumeric() || c == '_' {
            Class::Word
        } else {
            Class::Other
        }
    }
    let mut out = Vec::new();
    let mut start = 0;
    let mut prev: Option<Class> = None;
    for (i, c) in text.char_indices() {
        let k = class(c);
        if let Some(p) = prev
            && (p != k || k == Class::Other)
        {
            out.push(&text[start..i]);
            start = i;
        }
        prev = Some(k);
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// Whether a sentence can state a fact on its own: not a Markdown heading,
/// not a table rule or a code fence, and at least three words. Headings
/// and rules are context, never a claim.
pub fn is_statement(sentence: &str) -> bool {
    let t = sentence.trim();
    if t.starts_with('#') || t.starts_with("```") || t.starts_with("~~~") {
        return false;
    }
    if t.chars()
        .all(|c| matches!(c, '|' | '-' | ':' | ' ' | '=' | '*' | '_'))
    {
        return false;
    }
    t.split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .count()
        >= 3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_keep_their_white_space_and_concatenate_back() {
        let t = "# Title\n\nFirst one. Second \"quoted.\" Third?\nNo end";
        let s = sentences(t);
        assert_eq!(s.concat(), t);
        assert_eq!(
            s,
            vec![
                "# Title\n\n",
                "First one. ",
                "Second \"quoted.\" ",
                "Third?\n",
                "No end"
            ]
        );
        assert_eq!(sentences("v1.2 is out. Yes"), vec!["v1.2 is out. ", "Yes"]);
        assert!(sentences("").is_empty());
        for t in ["", "a", "日本語。テキスト. x", "\n\n\n", "a.b. c!? d"] {
            assert_eq!(sentences(t).concat(), t);
        }
    }

    #[test]
    fn word_pieces_concatenate_to_the_text() {
        for t in [
            "",
            "Refunds take 5 business days.",
            "  a\n\nb\t\"c\" \\ d—e…",
            "日本語のテキスト、です。🙂",
        ] {
            assert_eq!(word_pieces(t).concat(), t);
        }
        assert_eq!(word_pieces("5 days."), vec!["5", " ", "days", "."]);
    }

    #[test]
    fn statements_are_not_headings_or_rules() {
        assert!(is_statement("Refunds take 5 business days. "));
        assert!(!is_statement("## Refunds\n"));
        assert!(!is_statement("|---|---|\n"));
        assert!(!is_statement("Yes.\n"));
        assert!(!is_statement("```sql\n"));
        assert!(is_statement("- Cards are replaced for free.\n"));
    }
}
