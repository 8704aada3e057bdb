//! The decoding grammar: `GroundedAnswer` in a fixed JSON layout, with
//! `chunk_id` limited to the retrieved IDs and, in [`QuoteMode::Verbatim`],
//! each quote limited to a contiguous run of word-level pieces of the cited
//! chunk's text.
//!
//! The grammar is llguidance's Lark dialect. A verbatim quote is one lexeme
//! per chunk, built by llguidance from a suffix automaton over the chunk's
//! pieces (`%regex {"substring_chunks": [...]}`), so its size is linear in
//! the chunk's length and the lexer, not the Earley parser, does the work.
//! The pieces are JSON-escaped one by one (escaping is per character, so the
//! escaped pieces concatenate to the escaped text): what the model writes is
//! the JSON encoding of an exact substring, which is what the verifier later
//! checks, unchanged.

use groundcite_core::Chunk;

/// How quotes are constrained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QuoteMode {
    /// Each quote is one or more whole, consecutive sentences of the cited
    /// chunk ([`sentence_pieces`]): it cannot fail verification, and it is
    /// long enough to carry the figures the claim states. A small model
    /// left free to stop anywhere closes its quotes after two or three
    /// words ("The deposit is").
    #[default]
    Verbatim,
    /// Each quote is a contiguous run of words of the cited chunk
    /// ([`pieces`]): it cannot fail verification either.
    VerbatimWords,
    /// Any JSON string: the model may paraphrase (verification drops it).
    Free,
}

impl std::str::FromStr for QuoteMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "verbatim" | "sentences" => Ok(QuoteMode::Verbatim),
            "words" => Ok(QuoteMode::VerbatimWords),
            "free" => Ok(QuoteMode::Free),
            other => Err(format!("{other:?} is not verbatim, words or free")),
        }
    }
}

/// Bounds of the grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GrammarLimits {
    /// Most claims in one answer.
    pub max_claims: usize,
    /// Most citations in one claim.
    pub max_citations: usize,
    /// Most characters (after JSON escaping) in a claim's text.
    pub max_text_chars: usize,
    /// Most characters (after JSON escaping) in a quote.
    pub max_quote_chars: usize,
    /// What a claim's text may be.
    pub claim_text: ClaimText,
}

/// What a claim's text may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClaimText {
    /// Whole consecutive sentences of the claim's first cited chunk: every
    /// word the user reads is source text. The default for the small local
    /// model, which otherwise states things its quote does not say.
    #[default]
    Extractive,
    /// Any text (a larger model's own words; the quantity check still
    /// compares its figures with the quotes).
    Free,
}

impl std::str::FromStr for ClaimText {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "extractive" => Ok(ClaimText::Extractive),
            "free" => Ok(ClaimText::Free),
            other => Err(format!("{other:?} is not extractive or free")),
        }
    }
}

impl Default for GrammarLimits {
    fn default() -> Self {
        GrammarLimits {
            max_claims: 4,
            max_citations: 2,
            max_text_chars: 300,
            max_quote_chars: 400,
            claim_text: ClaimText::Extractive,
        }
    }
}

/// One JSON string's characters (without the quotes), as a regex body.
/// Written for a Lark `/…/` literal, so its `/` is escaped.
const JSON_CHAR: &str = r#"([^"\\\x00-\x1F]|\\["\\\/bfnrt]|\\u[0-9a-fA-F]{4})"#;

/// The Lark grammar of a `GroundedAnswer` citing `chunks`, written exactly as
/// `{"answerable": true, "claims": [{"citations": [{"quote": "…",
/// "chunk_id": "…"}], "text": "…"}]}` (the layout of the prompt's example, so
/// the small model is never surprised) or `{"answerable": false, "claims":
/// []}`.
///
/// Quote first, then the chunk ID, then the claim's text: the model copies a
/// passage before it says anything, and says it after reading it back. In
/// [`QuoteMode::Verbatim`] the quote may come from any chunk shown and the
/// grammar then allows only the IDs of chunks that contain it (usually
/// one, which is then forced): the model cannot quote one chunk and cite
/// another, the commonest mistake of a small model choosing an ID first.
/// Field order does not matter to JSON; the output parses as
/// `GroundedAnswer` like any other.
///
/// `chunks` must be what the model was shown: a quote is held to that text.
/// With no chunk, only the unanswerable form is possible.
pub fn grounded_grammar(chunks: &[Chunk], mode: QuoteMode, limits: &GrammarLimits) -> String {
    let mut g = String::new();
    let unanswerable = lit(r#"{"answerable": false, "claims": []}"#);
    if chunks.is_empty() {
        g.push_str(&format!("start: {unanswerable}\n"));
        return g;
    }
    let more_claims = limits.max_claims.saturating_sub(1);
    let more_cites = limits.max_citations.saturating_sub(1);
    g.push_str(&format!(
        "start: {unanswerable} | {open} claim ({sep} claim){{0,{more_claims}}} {close}\n",
        open = lit(r#"{"answerable": true, "claims": ["#),
        sep = lit(", "),
        close = lit("]}"),
    ));
    match limits.claim_text {
        ClaimText::Free => g.push_str(&format!(
            "claim: {open} cite ({sep} cite){{0,{more_cites}}} {mid} TEXT {close}\n",
            open = lit(r#"{"citations": ["#),
            sep = lit(", "),
            mid = lit(r#"], "text": "#),
            close = lit("}"),
        )),
        ClaimText::Extractive => {
            // One alternative per chunk: the first citation names the chunk
            // the text is drawn from.
            let alternatives: Vec<String> =
                (0..chunks.len()).map(|i| format!("claim_{i}")).collect();
            g.push_str(&format!("claim: {}\n", alternatives.join(" | ")));
            for i in 0..chunks.len() {
                g.push_str(&format!(
                    "claim_{i}: {open} cite_{i} ({sep} cite){{0,{more_cites}}} {mid} TEXT_{i} {close}\n",
                    open = lit(r#"{"citations": ["#),
                    sep = lit(", "),
                    mid = lit(r#"], "text": "#),
                    close = lit("}"),
                ));
            }
        }
    }
    let alternatives: Vec<String> = (0..chunks.len()).map(|i| format!("cite_{i}")).collect();
    g.push_str(&format!("cite: {}\n", alternatives.join(" | ")));
    for (i, c) in chunks.iter().enumerate() {
        let tail = format!(r#", "chunk_id": {}}}"#, json_string(&c.chunk_id));
        let quote = match mode {
            QuoteMode::Verbatim | QuoteMode::VerbatimWords => format!("QUOTE_{i}"),
            QuoteMode::Free => "FREE_QUOTE".to_string(),
        };
        g.push_str(&format!(
            "cite_{i}: {} {quote} {}\n",
            lit(r#"{"quote": "#),
            lit(&tail)
        ));
    }
    match limits.claim_text {
        ClaimText::Free => g.push_str(&format!(
            "TEXT: /\"{JSON_CHAR}{{1,{}}}\"/\n",
            limits.max_text_chars
        )),
        ClaimText::Extractive => {
            for (i, c) in chunks.iter().enumerate() {
                g.push_str(&format!(
                    "TEXT_{i}: {}\n",
                    substring_lexeme(
                        &sentence_pieces(&c.content, limits.max_text_chars),
                        limits.max_text_chars
                    )
                ));
            }
        }
    }
    match mode {
        QuoteMode::Free => g.push_str(&format!(
            "FREE_QUOTE: /\"{JSON_CHAR}{{1,{}}}\"/\n",
            limits.max_quote_chars
        )),
        QuoteMode::Verbatim | QuoteMode::VerbatimWords => {
            for (i, c) in chunks.iter().enumerate() {
                let split = if mode == QuoteMode::Verbatim {
                    sentence_pieces(&c.content, limits.max_quote_chars)
                } else {
                    pieces(&c.content)
                };
                g.push_str(&format!(
                    "QUOTE_{i}: {}\n",
                    substring_lexeme(&split, limits.max_quote_chars)
                ));
            }
        }
    }
    g
}

/// A lexeme matching the JSON string (quotes included) of any non-empty run
/// of consecutive `pieces`, at most `max_chars` long once escaped.
fn substring_lexeme(pieces: &[&str], max_chars: usize) -> String {
    let escaped: Vec<String> = pieces
        .iter()
        .map(|p| {
            let j = json_string(p);
            j[1..j.len() - 1].to_string()
        })
        .collect();
    // The intersection keeps the string non-empty and bounded; escaped
    // pieces never contain an unescaped `"`, so the closing quote ends the
    // lexeme unambiguously.
    format!(
        "\"\\\"\" (%regex {{\"substring_chunks\": {}}} & /{JSON_CHAR}{{1,{max_chars}}}/) \"\\\"\"",
        serde_json::Value::from(escaped)
    )
}

/// The grammar of an arbitrary JSON schema (a caller's own schema, with no
/// quote constraint).
pub fn schema_grammar(schema: &serde_json::Value) -> String {
    // `%json` is accepted only in a lower-case rule.
    format!("start: answer\nanswer: %json {schema}\n")
}

/// A Lark string literal (Lark strings are JSON strings).
fn lit(s: &str) -> String {
    json_string(s)
}

fn json_string(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// Splits text into runs of word characters (alphanumeric or `_`), of
/// white space, and single other characters; a quote may start and end at
/// any piece boundary. Concatenating the pieces gives `text` back.
pub fn pieces(text: &str) -> Vec<&str> {
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

/// Splits text into sentences, each with the white space that follows it;
/// a sentence ends after `.`, `!` or `?` (and any closing quotes or
/// brackets) followed by white space, or at a line break. A sentence longer
/// than `max_chars` is split into [`pieces`] so it can still be quoted in
/// part. Concatenating the pieces gives `text` back.
pub fn sentence_pieces(text: &str, max_chars: usize) -> Vec<&str> {
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
            push_sentence(&mut out, &text[start..e], max_chars);
            start = e;
        }
    }
    if start < text.len() {
        push_sentence(&mut out, &text[start..], max_chars);
    }
    out
}

fn push_sentence<'a>(out: &mut Vec<&'a str>, s: &'a str, max_chars: usize) {
    // Escaping can only lengthen; compare escaped lengths conservatively.
    if json_string(s).len() > max_chars {
        out.extend(pieces(s));
    } else {
        out.push(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_concatenate_to_the_text() {
        for t in [
            "",
            "Refunds take 5 business days.",
            "  a\n\nb\t\"c\" \\ d—e…",
            "日本語のテキスト、です。🙂",
        ] {
            assert_eq!(pieces(t).concat(), t);
        }
        assert_eq!(
            pieces("5 days."),
            vec!["5", " ", "days", "."],
            "punctuation is its own piece"
        );
    }

    #[test]
    fn sentences_keep_their_white_space_and_concatenate_back() {
        let t = "# Title\n\nFirst one. Second \"quoted.\" Third?\nNo end";
        let s = sentence_pieces(t, 400);
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
        assert_eq!(
            sentence_pieces("v1.2 is out. Yes", 400),
            vec!["v1.2 is out. ", "Yes"]
        );
        let long = "word ".repeat(100);
        assert!(sentence_pieces(&long, 50).len() > 100);
        assert_eq!(sentence_pieces(&long, 50).concat(), long);
        assert!(sentence_pieces("", 10).is_empty());
    }

    #[test]
    fn grammar_names_every_chunk_once() {
        let chunks = vec![
            Chunk {
                chunk_id: "a.md#chunk-0".into(),
                content: "Say \"hi\".".into(),
                source_title: None,
                source_url: None,
                page_number: None,
                score: None,
            },
            Chunk {
                chunk_id: "b\"q".into(),
                content: "x".into(),
                source_title: None,
                source_url: None,
                page_number: None,
                score: None,
            },
        ];
        let g = grounded_grammar(&chunks, QuoteMode::Verbatim, &GrammarLimits::default());
        assert!(g.contains("cite: cite_0 | cite_1\n"), "{g}");
        assert!(g.contains(r#"\"chunk_id\": \"b\\\"q\""#), "{g}");
        assert!(g.contains("QUOTE_1"), "{g}");
    }
}
