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

use groundcite_core::sentences;
use groundcite_core::{Candidate, Chunk};

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

/// A setting's name that is not one of its values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{value:?} is not {expected}")]
pub struct UnknownValue {
    /// What was given.
    pub value: String,
    /// The values accepted, in words.
    pub expected: &'static str,
}

impl UnknownValue {
    fn new(value: &str, expected: &'static str) -> Self {
        UnknownValue {
            value: value.to_string(),
            expected,
        }
    }
}

impl std::str::FromStr for QuoteMode {
    type Err = UnknownValue;

    fn from_str(s: &str) -> Result<Self, UnknownValue> {
        match s {
            "verbatim" | "sentences" => Ok(QuoteMode::Verbatim),
            "words" => Ok(QuoteMode::VerbatimWords),
            "free" => Ok(QuoteMode::Free),
            other => Err(UnknownValue::new(other, "verbatim, words or free")),
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
    type Err = UnknownValue;

    fn from_str(s: &str) -> Result<Self, UnknownValue> {
        match s {
            "extractive" => Ok(ClaimText::Extractive),
            "free" => Ok(ClaimText::Free),
            other => Err(UnknownValue::new(other, "extractive or free")),
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
/// quote constraint). White space is fixed (`", "` between items, `": "`
/// after keys): free white space lets a small model write newlines until
/// its limit.
pub fn schema_grammar(schema: &serde_json::Value) -> String {
    let schema = schema.clone();
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

/// Splits text into runs of word characters, of white space, and single
/// other characters ([`groundcite_core::sentences::word_pieces`]).
pub fn pieces(text: &str) -> Vec<&str> {
    sentences::word_pieces(text)
}

/// Splits text into sentences ([`groundcite_core::sentences::sentences`],
/// the rule the index and the ranker use too); a sentence longer than
/// `max_chars` once JSON-escaped is split into [`pieces`] so it can still be
/// quoted in part. Concatenating the pieces gives `text` back.
pub fn sentence_pieces(text: &str, max_chars: usize) -> Vec<&str> {
    let mut out = Vec::new();
    for s in sentences::sentences(text) {
        // Escaping can only lengthen; compare escaped lengths conservatively.
        if json_string(s).len() > max_chars {
            out.extend(pieces(s));
        } else {
            out.push(s);
        }
    }
    out
}

/// The grammar of an extractive answer that quotes only `candidates`: each
/// claim is one whole candidate sentence, cited from the chunk that holds
/// it, written `{"citations": [{"quote": "…", "chunk_id": "…"}]}` (the
/// claim's text is filled in from its quote, [`AnswerForm::Extractive`]:
/// the model writes each sentence once). Claims follow the candidates'
/// order, each at most once, at most `max_claims` of them, so the output
/// cannot repeat itself and its longest form is known
/// ([`CandidateGrammar::max_bytes`]).
///
/// [`AnswerForm::Extractive`]: groundcite_core::AnswerForm::Extractive
pub fn candidate_grammar(
    candidates: &[Candidate],
    max_claims: usize,
    choice: Choice,
) -> CandidateGrammar {
    let unanswerable = r#"{"answerable": false, "claims": []}"#;
    let open = r#"{"answerable": true, "claims": ["#;
    let close = "]}";
    let sep = ", ";
    let mut g = String::new();
    let claims: Vec<String> = candidates
        .iter()
        .map(|c| {
            // A sentence and the block it introduces are one claim.
            let quotes: Vec<String> = c
                .citations()
                .iter()
                .map(|q| {
                    format!(
                        r#"{{"quote": {}, "chunk_id": {}}}"#,
                        json_string(&q.quote),
                        json_string(&q.chunk_id)
                    )
                })
                .collect();
            format!(r#"{{"citations": [{}]}}"#, quotes.join(", "))
        })
        .collect();
    let max_claims = max_claims.min(claims.len());
    if max_claims == 0 {
        g.push_str(&format!("start: {}\n", lit(unanswerable)));
        return CandidateGrammar {
            lark: g,
            max_bytes: unanswerable.len(),
        };
    }
    // after_i_d: what may follow claim i when d claims were written: the
    // end, or a later claim (j > i) while fewer than max_claims were
    // written. A claim with nothing after it is just its literal.
    let n = claims.len();
    let follow = |i: usize, d: usize| {
        if d == max_claims || i + 1 == n {
            format!("k{i}")
        } else {
            format!("k{i} after_{i}_{d}")
        }
    };
    // Required candidates (at the front) are quoted in order, always.
    let required = candidates
        .iter()
        .take(max_claims)
        .take_while(|c| c.required)
        .count();
    // Subset: any candidate may come first and any later one next. Prefix:
    // the best candidate first, then each next one or the end.
    let firsts = match choice {
        _ if required > 0 => 1,
        Choice::Subset => n,
        Choice::Prefix => 1,
    };
    let first: Vec<String> = (0..firsts).map(|i| follow(i, 1)).collect();
    g.push_str(&format!(
        "start: {} | {} ({}) {}\n",
        lit(unanswerable),
        lit(open),
        first.join(" | "),
        lit(close)
    ));
    for d in 1..max_claims {
        for i in 0..n.saturating_sub(1) {
            let last = match choice {
                _ if i + 1 < required => i + 2,
                Choice::Subset => n,
                Choice::Prefix => i + 2,
            };
            let later: Vec<String> = (i + 1..last)
                .map(|j| format!("{} {}", lit(sep), follow(j, d + 1)))
                .collect();
            if i + 1 < required {
                // The next required candidate must follow.
                g.push_str(&format!("after_{i}_{d}: {}\n", later.join(" | ")));
            } else {
                g.push_str(&format!("after_{i}_{d}: ({})?\n", later.join(" | ")));
            }
        }
    }
    for (i, c) in claims.iter().enumerate() {
        g.push_str(&format!("k{i}: {}\n", lit(c)));
    }
    // The longest output: the max_claims longest claims.
    let mut lens: Vec<usize> = claims.iter().map(String::len).collect();
    lens.sort_unstable_by(|a, b| b.cmp(a));
    let longest: usize = lens.iter().take(max_claims).sum();
    let max_bytes =
        (open.len() + longest + sep.len() * (max_claims - 1) + close.len()).max(unanswerable.len());
    CandidateGrammar { lark: g, max_bytes }
}

/// How the model may choose among candidate sentences (best first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Choice {
    /// Any of them, each at most once, in their order.
    Subset,
    /// The best first, then each next one in turn: the model decides how
    /// many (the default: measured better than letting it pick).
    #[default]
    Prefix,
}

impl std::str::FromStr for Choice {
    type Err = UnknownValue;

    fn from_str(s: &str) -> Result<Self, UnknownValue> {
        match s {
            "subset" => Ok(Choice::Subset),
            "prefix" => Ok(Choice::Prefix),
            other => Err(UnknownValue::new(other, "subset or prefix")),
        }
    }
}

/// A grammar over candidate sentences ([`candidate_grammar`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CandidateGrammar {
    /// The Lark grammar.
    pub lark: String,
    /// The longest output it allows, in bytes. Every token is at least one
    /// byte, so a token limit of this many tokens can never cut it off.
    pub max_bytes: usize,
}

/// The longest output [`grounded_grammar`] allows over `chunks`, in bytes
/// (every token is at least one byte, so a token limit this large cannot
/// cut an answer off).
pub fn grounded_max_bytes(chunks: &[Chunk], mode: QuoteMode, limits: &GrammarLimits) -> usize {
    let unanswerable = r#"{"answerable": false, "claims": []}"#.len();
    if chunks.is_empty() {
        return unanswerable;
    }
    // A JSON character unit is at most 6 bytes (`\uXXXX`); a verbatim quote
    // is also no longer than its chunk's escaped text.
    let unit = 6;
    let quote = |c: &Chunk| match mode {
        QuoteMode::Free => limits.max_quote_chars * unit,
        QuoteMode::Verbatim | QuoteMode::VerbatimWords => {
            (json_string(&c.content).len()).min(limits.max_quote_chars * unit)
        }
    };
    let longest_quote = chunks.iter().map(quote).max().unwrap_or(0);
    let longest_id = chunks
        .iter()
        .map(|c| json_string(&c.chunk_id).len())
        .max()
        .unwrap_or(0);
    let text = match limits.claim_text {
        ClaimText::Free => limits.max_text_chars * unit,
        ClaimText::Extractive => chunks
            .iter()
            .map(|c| {
                json_string(&c.content)
                    .len()
                    .min(limits.max_text_chars * unit)
            })
            .max()
            .unwrap_or(0),
    };
    let cite = r#"{"quote": , "chunk_id": }"#.len() + 2 + longest_quote + longest_id;
    let claim = r#"{"citations": [], "text": }"#.len()
        + 2
        + limits.max_citations * cite
        + (limits.max_citations.saturating_sub(1)) * 2
        + text;
    let open = r#"{"answerable": true, "claims": ["#.len();
    (open + limits.max_claims * claim + limits.max_claims.saturating_sub(1) * 2 + 2)
        .max(unanswerable)
}

#[cfg(test)]
mod tests {
    use super::*;

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
