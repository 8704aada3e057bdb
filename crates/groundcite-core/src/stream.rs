//! Incremental claim extraction from a streamed JSON answer.
//!
//! A provider streaming a structured answer sends the JSON text
//! `{"answerable": …, "claims": [{…}, …]}` in arbitrary fragments. A
//! [`ClaimStream`] takes those fragments as they arrive and hands out each
//! claim as soon as its JSON object closes, so that a caller can verify and
//! show it before the model has finished. [`StreamVerifier`] does exactly
//! that, feeding each claim to a [`Verifier`] in order.
//!
//! # Invariants
//! - The claims handed out are exactly the claims of the whole text parsed at
//!   once, in order: each is parsed by `serde_json` from the exact bytes of
//!   its object, and [`ClaimStream::finish`] parses the whole text again and
//!   checks that the claims agree.
//! - Fragment boundaries do not matter: the scanner works on bytes and keeps
//!   its state (inside a string, after a backslash, nesting depth) between
//!   fragments, so a fragment may end inside a string, an escape sequence or a
//!   multi-byte UTF-8 character ([`ClaimStream::feed_bytes`]).
//! - Claims handed out before [`ClaimStream::finish`] are provisional: if the
//!   whole text turns out not to be a valid [`GroundedAnswer`] (truncated,
//!   a duplicate key, an unknown field), `finish` fails and the answer as a
//!   whole counts as a generation failure (R3).
//! - No input panics; memory is bounded by [`ClaimStream::with_limit`].
//!
//! ```
//! use groundcite_core::stream::ClaimStream;
//!
//! let mut stream = ClaimStream::new();
//! let mut seen = Vec::new();
//! for fragment in [r#"{"answerable": true, "claims": [{"text": "A [b"#,
//!                  r#"]", "citations": []}, {"te"#,
//!                  r#"xt": "C", "citations": []}]}"#] {
//!     seen.extend(stream.feed(fragment)?);
//! }
//! assert_eq!(seen.len(), 2);
//! assert_eq!(seen[0].text, "A [b]");
//! let answer = stream.finish()?;
//! assert_eq!(answer.claims, seen);
//! # Ok::<(), groundcite_core::stream::StreamError>(())
//! ```

use std::fmt;

use crate::contract::{Contract, Provenance};
use crate::model::{AnswerForm, ChunkSet, Claim, GroundedAnswer};
use crate::normalize::MatchProfile;
use crate::verify::{ClaimOutcome, ClaimPolicy, Verifier};

/// Default cap on the text a [`ClaimStream`] buffers (16 MiB): far above any
/// answer a provider returns within its output-token limit.
pub const DEFAULT_STREAM_LIMIT: usize = 16 << 20;

/// Why a streamed answer cannot be used. Every variant means the model's
/// output is not a valid answer: a generation failure (R3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamError {
    /// The text does not start with a JSON object (`{`).
    NotAnObject {
        /// Byte offset of the first offending byte.
        offset: usize,
    },
    /// A closing bracket without a matching opening one.
    Unbalanced {
        /// Byte offset of the bracket.
        offset: usize,
    },
    /// A closed element of `claims` is not a valid claim object.
    InvalidClaim {
        /// Position of the claim in `claims`.
        index: usize,
        /// The JSON parser's message.
        message: String,
    },
    /// The text grew beyond the stream's limit.
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The text ended before the answer object closed (for example, the
    /// provider stopped at its token limit).
    Incomplete {
        /// Bytes received.
        received: usize,
    },
    /// The whole text is not a valid answer.
    InvalidAnswer {
        /// The JSON parser's message, with line and column.
        message: String,
    },
    /// The whole text parsed, but its claims differ from those handed out
    /// while streaming (a defect of the scanner; never expected).
    Inconsistent,
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StreamError::NotAnObject { offset } => write!(
                f,
                "the model's output is not a JSON object (unexpected byte at offset {offset})"
            ),
            StreamError::Unbalanced { offset } => {
                write!(f, "unbalanced closing bracket at byte offset {offset}")
            }
            StreamError::InvalidClaim { index, message } => {
                write!(f, "claim {index} is not a valid claim object: {message}")
            }
            StreamError::TooLarge { limit } => {
                write!(f, "the model's output exceeds {limit} bytes")
            }
            StreamError::Incomplete { received } => write!(
                f,
                "the model's output ended after {received} bytes, before the answer object closed"
            ),
            StreamError::InvalidAnswer { message } => {
                write!(f, "the model's output is not a valid answer: {message}")
            }
            StreamError::Inconsistent => {
                f.write_str("the streamed claims differ from the claims of the complete answer")
            }
        }
    }
}

impl std::error::Error for StreamError {}

/// Where the scanner is within a member of the root object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Member {
    /// Expecting a key (or the end of the object).
    Key,
    /// Between a key and its colon.
    Colon,
    /// Expecting a value.
    Value,
    /// Inside a value that started at `value_start`.
    InValue,
    /// After a complete value, expecting `,` or `}`.
    AfterValue,
}

/// Incremental extraction of claims from the JSON text of a [`GroundedAnswer`].
#[derive(Debug, Clone)]
pub struct ClaimStream {
    buf: Vec<u8>,
    limit: usize,
    /// Bytes of `buf` already scanned.
    scanned: usize,
    started: bool,
    closed: bool,
    depth: usize,
    in_string: bool,
    escape: bool,
    string_start: usize,
    member: Member,
    key: Option<String>,
    value_start: usize,
    /// Inside the root's `claims` array (the array is at depth 2).
    in_claims: bool,
    claim_start: Option<usize>,
    /// Index of the next element of `claims`.
    element: usize,
    answerable: Option<bool>,
    emitted: Vec<Claim>,
    error: Option<StreamError>,
    form: AnswerForm,
}

impl Default for ClaimStream {
    fn default() -> Self {
        ClaimStream::new()
    }
}

impl ClaimStream {
    /// A stream with the default size limit ([`DEFAULT_STREAM_LIMIT`]).
    pub fn new() -> ClaimStream {
        ClaimStream::with_limit(DEFAULT_STREAM_LIMIT)
    }

    /// A stream that fails with [`StreamError::TooLarge`] beyond `limit` bytes.
    pub fn with_limit(limit: usize) -> ClaimStream {
        ClaimStream {
            buf: Vec::new(),
            limit,
            scanned: 0,
            started: false,
            closed: false,
            depth: 0,
            in_string: false,
            escape: false,
            string_start: 0,
            member: Member::Key,
            key: None,
            value_start: 0,
            in_claims: false,
            claim_start: None,
            element: 0,
            answerable: None,
            emitted: Vec::new(),
            error: None,
            form: AnswerForm::Grounded,
        }
    }

    /// Reads claims written in `form` (the default is
    /// [`AnswerForm::Grounded`]).
    pub fn with_form(mut self, form: AnswerForm) -> ClaimStream {
        self.form = form;
        self
    }

    /// Feeds a text fragment; returns the claims whose objects closed in it.
    pub fn feed(&mut self, fragment: &str) -> Result<Vec<Claim>, StreamError> {
        self.feed_bytes(fragment.as_bytes())
    }

    /// Feeds raw bytes (a fragment may end inside a UTF-8 character); returns
    /// the claims whose objects closed in them. After an error, every call
    /// returns the same error.
    pub fn feed_bytes(&mut self, bytes: &[u8]) -> Result<Vec<Claim>, StreamError> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        if self.buf.len().saturating_add(bytes.len()) > self.limit {
            return Err(self.fail(StreamError::TooLarge { limit: self.limit }));
        }
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        while self.scanned < self.buf.len() {
            let i = self.scanned;
            self.scanned += 1;
            if let Err(e) = self.step(i, &mut out) {
                return Err(self.fail(e));
            }
        }
        Ok(out)
    }

    /// What the model said about answerability, once its value has been read.
    pub fn answerable(&self) -> Option<bool> {
        self.answerable
    }

    /// Claims handed out so far.
    pub fn claims_seen(&self) -> usize {
        self.emitted.len()
    }

    /// The text received so far (possibly ending inside a UTF-8 character).
    pub fn received(&self) -> &[u8] {
        &self.buf
    }

    /// Parses the whole text and checks that it agrees with the claims
    /// handed out while streaming.
    pub fn finish(self) -> Result<GroundedAnswer, StreamError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if !self.closed {
            let whitespace_only = self.buf.iter().all(u8::is_ascii_whitespace);
            return Err(if whitespace_only || !self.started {
                StreamError::InvalidAnswer {
                    message: "the output is empty".into(),
                }
            } else {
                StreamError::Incomplete {
                    received: self.buf.len(),
                }
            });
        }
        let answer: GroundedAnswer =
            self.form
                .parse_answer(&self.buf)
                .map_err(|e| StreamError::InvalidAnswer {
                    message: e.to_string(),
                })?;
        if answer.claims.len() < self.emitted.len()
            || answer.claims[..self.emitted.len()] != self.emitted[..]
        {
            return Err(StreamError::Inconsistent);
        }
        Ok(answer)
    }

    fn fail(&mut self, e: StreamError) -> StreamError {
        self.error = Some(e.clone());
        e
    }

    /// Scans byte `i` of the buffer.
    fn step(&mut self, i: usize, out: &mut Vec<Claim>) -> Result<(), StreamError> {
        let b = self.buf[i];
        if self.in_string {
            if self.escape {
                self.escape = false;
            } else if b == b'\\' {
                self.escape = true;
            } else if b == b'"' {
                self.in_string = false;
                if self.depth == 1 && self.member == Member::Key {
                    // Key decoding can only fail on invalid escapes; the
                    // final parse reports those.
                    self.key = serde_json::from_slice(&self.buf[self.string_start..=i]).ok();
                    self.member = Member::Colon;
                }
            }
            return Ok(());
        }
        if !self.started {
            return match b {
                b' ' | b'\t' | b'\n' | b'\r' => Ok(()),
                b'{' => {
                    self.started = true;
                    self.depth = 1;
                    self.member = Member::Key;
                    Ok(())
                }
                _ => Err(StreamError::NotAnObject { offset: i }),
            };
        }
        if self.closed {
            // Trailing bytes: the final parse decides (white space is fine).
            return Ok(());
        }
        let value_begins = self.depth == 1 && self.member == Member::Value;
        match b {
            b'"' => {
                self.in_string = true;
                self.string_start = i;
                if value_begins {
                    self.begin_value(i);
                }
            }
            b'{' | b'[' => {
                if value_begins {
                    self.begin_value(i);
                    if b == b'[' && self.key.as_deref() == Some("claims") {
                        self.in_claims = true;
                        self.element = 0;
                    }
                } else if b == b'{' && self.depth == 2 && self.in_claims {
                    self.claim_start = Some(i);
                }
                self.depth += 1;
            }
            b'}' | b']' => {
                if self.depth == 0 {
                    return Err(StreamError::Unbalanced { offset: i });
                }
                if self.depth == 1 {
                    // The root closes; a scalar value ends here.
                    if self.member == Member::InValue {
                        self.end_value(i);
                    }
                    self.depth = 0;
                    self.closed = true;
                    return Ok(());
                }
                self.depth -= 1;
                if self.depth == 2 && self.in_claims && b == b'}' {
                    if let Some(start) = self.claim_start.take() {
                        let index = self.element;
                        let claim: Claim =
                            self.form.parse_claim(&self.buf[start..=i]).map_err(|e| {
                                StreamError::InvalidClaim {
                                    index,
                                    message: e.to_string(),
                                }
                            })?;
                        self.emitted.push(claim.clone());
                        out.push(claim);
                    }
                } else if self.depth == 1 {
                    self.in_claims = false;
                    self.claim_start = None;
                    self.end_value(i + 1);
                }
            }
            b',' => {
                if self.depth == 1 {
                    if self.member == Member::InValue {
                        self.end_value(i);
                    }
                    self.member = Member::Key;
                } else if self.depth == 2 && self.in_claims {
                    self.element += 1;
                    self.claim_start = None;
                }
            }
            b':' if self.depth == 1 && self.member == Member::Colon => {
                self.member = Member::Value;
            }
            b' ' | b'\t' | b'\n' | b'\r' => {}
            _ => {
                if value_begins {
                    self.begin_value(i);
                }
            }
        }
        Ok(())
    }

    fn begin_value(&mut self, i: usize) {
        self.value_start = i;
        self.member = Member::InValue;
    }

    /// A root member's value occupies `value_start..end`.
    fn end_value(&mut self, end: usize) {
        self.member = Member::AfterValue;
        if self.key.as_deref() == Some("answerable") {
            let raw = &self.buf[self.value_start..end];
            self.answerable = match raw.trim_ascii() {
                b"true" => Some(true),
                b"false" => Some(false),
                _ => None,
            };
        }
    }
}

/// Verifies a streamed answer claim by claim, with the same result as
/// [`verify`](crate::verify) on the whole answer.
///
/// A claim is verified as soon as it closes if the model has already said
/// `answerable: true` (the strict schemas put `answerable` first); otherwise
/// it waits until `answerable` is known, and with `answerable: false` the
/// claims are discarded unverified, as [`verify`](crate::verify) does.
#[derive(Debug)]
pub struct StreamVerifier<'a> {
    stream: ClaimStream,
    verifier: Verifier<'a>,
    /// Claims received but not yet verified (answerability unknown).
    pending: Vec<Claim>,
    /// Claims verified so far.
    verified: usize,
}

impl<'a> StreamVerifier<'a> {
    /// A verifier for one streamed answer.
    pub fn new(chunks: &'a ChunkSet, profile: MatchProfile) -> StreamVerifier<'a> {
        StreamVerifier {
            stream: ClaimStream::new(),
            verifier: Verifier::new(chunks, profile),
            pending: Vec::new(),
            verified: 0,
        }
    }

    /// Applies a claim policy (see [`ClaimPolicy`]); the default is strict.
    pub fn with_claim_policy(mut self, policy: ClaimPolicy) -> StreamVerifier<'a> {
        self.verifier = self.verifier.with_claim_policy(policy);
        self
    }

    /// Reads claims written in `form` (see [`AnswerForm`]).
    pub fn with_form(mut self, form: AnswerForm) -> StreamVerifier<'a> {
        self.stream = self.stream.with_form(form);
        self
    }

    /// Feeds a fragment; returns the outcome of every claim verified now,
    /// with its index in the answer.
    pub fn feed(&mut self, fragment: &str) -> Result<Vec<(usize, ClaimOutcome)>, StreamError> {
        let claims = self.stream.feed(fragment)?;
        self.pending.extend(claims);
        let mut out = Vec::new();
        if self.stream.answerable() == Some(true) {
            for claim in std::mem::take(&mut self.pending) {
                let index = self.verified;
                out.push((index, self.verifier.claim(index, &claim)));
                self.verified += 1;
            }
        }
        Ok(out)
    }

    /// The stream's view of answerability so far.
    pub fn answerable(&self) -> Option<bool> {
        self.stream.answerable()
    }

    /// Ends the stream and builds the contract. On error the caller refuses
    /// with R3: the claims already shown were verified but the answer as a
    /// whole is not valid.
    pub fn finish(mut self, provenance: Provenance) -> Result<Contract, StreamError> {
        let answer = self.stream.finish()?;
        if answer.answerable {
            for (index, claim) in answer.claims.iter().enumerate().skip(self.verified) {
                self.verifier.claim(index, claim);
            }
        } else {
            // `answerable` was read as false before any claim was verified,
            // or appears only now; either way nothing was verified.
            if self.verified > 0 {
                return Err(StreamError::Inconsistent);
            }
            self.verifier.discard_claims(answer.claims.len());
        }
        Ok(self.verifier.finish(answer.answerable, provenance))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_at_once(text: &str) -> (Vec<Claim>, Result<GroundedAnswer, StreamError>) {
        let mut s = ClaimStream::new();
        let claims = s.feed(text).unwrap_or_default();
        (claims, s.finish())
    }

    #[test]
    fn extractive_claims_take_their_quotes_as_text() {
        let text = r#"{"answerable": true, "claims": [{"citations": [{"quote": " Refunds take 5 days. ", "chunk_id": "a"}]}, {"citations": [{"quote": "X.", "chunk_id": "a"}, {"quote": "Y.", "chunk_id": "b"}]}]}"#;
        let mut s = ClaimStream::new().with_form(AnswerForm::Extractive);
        let mut seen = Vec::new();
        for piece in text.as_bytes().chunks(7) {
            seen.extend(s.feed_bytes(piece).expect("valid"));
        }
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[0].text, "Refunds take 5 days.");
        assert_eq!(seen[1].text, "X. Y.");
        let answer = s.finish().expect("valid");
        assert_eq!(answer.claims, seen);
        // The seed's form refuses a claim without text, and the extractive
        // form refuses one with it: the form is not guessed.
        let mut g = ClaimStream::new();
        assert!(matches!(
            g.feed(text),
            Err(StreamError::InvalidClaim { index: 0, .. })
        ));
        let with_text = r#"{"answerable": true, "claims": [{"text": "t", "citations": []}]}"#;
        let mut e = ClaimStream::new().with_form(AnswerForm::Extractive);
        assert!(e.feed(with_text).is_err());
    }

    #[test]
    fn claims_close_one_by_one() {
        let text = r#"{"answerable": true, "claims": [
            {"text": "a \"quoted\" {brace} [bracket]", "citations": [{"chunk_id": "x", "quote": "q\\"}]},
            {"text": "b", "citations": []}
        ]}"#;
        let mut s = ClaimStream::new();
        let mut got = Vec::new();
        for (i, ch) in text.char_indices() {
            let claims = s.feed(&text[i..i + ch.len_utf8()]).unwrap();
            got.extend(claims);
            if i < text.find("\"b\"").unwrap() {
                assert!(got.len() <= 1);
            }
        }
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].text, "a \"quoted\" {brace} [bracket]");
        assert_eq!(got[0].citations[0].quote, "q\\");
        let answer = s.finish().unwrap();
        assert_eq!(answer.claims, got);
    }

    #[test]
    fn answerable_is_read_whatever_its_place() {
        let mut s = ClaimStream::new();
        s.feed(r#"{"claims": [], "answerable"  :  false "#).unwrap();
        assert_eq!(s.answerable(), None);
        s.feed("}").unwrap();
        assert_eq!(s.answerable(), Some(false));
        assert!(!s.finish().unwrap().answerable);
        let mut s = ClaimStream::new();
        s.feed(r#"{"answerable":true,"#).unwrap();
        assert_eq!(s.answerable(), Some(true));
    }

    #[test]
    fn split_utf8_and_escapes() {
        let text = "{\"answerable\":true,\"claims\":[{\"text\":\"caf\u{e9} \\u00e9 \\\" \u{1F600}\",\"citations\":[]}]}";
        let bytes = text.as_bytes();
        for cut in 0..bytes.len() {
            let mut s = ClaimStream::new();
            let mut got = s.feed_bytes(&bytes[..cut]).unwrap();
            got.extend(s.feed_bytes(&bytes[cut..]).unwrap());
            assert_eq!(got.len(), 1, "cut {cut}");
            assert_eq!(got[0].text, "caf\u{e9} \u{e9} \" \u{1F600}");
            s.finish().unwrap();
        }
    }

    #[test]
    fn errors() {
        assert_eq!(
            ClaimStream::new().feed("  [1]").unwrap_err(),
            StreamError::NotAnObject { offset: 2 }
        );
        let (_, r) = all_at_once(r#"{"answerable": true, "claims": [{"text": "a""#);
        assert!(matches!(r, Err(StreamError::Incomplete { .. })));
        let (_, r) = all_at_once("");
        assert!(matches!(r, Err(StreamError::InvalidAnswer { .. })));
        let mut s = ClaimStream::new();
        let e = s
            .feed(r#"{"answerable": true, "claims": [{"text": "a", "extra": 1, "citations": []}]}"#)
            .unwrap_err();
        assert!(matches!(e, StreamError::InvalidClaim { index: 0, .. }));
        // The error sticks.
        assert_eq!(s.feed("x").unwrap_err(), e);
        let (claims, r) = all_at_once(
            r#"{"answerable": true, "claims": [{"text": "a", "citations": []}], "claims": []}"#,
        );
        assert_eq!(claims.len(), 1);
        assert!(matches!(r, Err(StreamError::InvalidAnswer { .. })));
        let mut s = ClaimStream::with_limit(4);
        assert_eq!(
            s.feed("{\"answerable\"").unwrap_err(),
            StreamError::TooLarge { limit: 4 }
        );
    }

    #[test]
    fn nested_arrays_inside_other_members_are_not_claims() {
        let (claims, r) =
            all_at_once(r#"{"other": [{"text": "x", "citations": []}], "claims": []}"#);
        assert!(claims.is_empty());
        assert!(r.is_err());
    }

    mod properties {
        use proptest::prelude::*;

        use super::super::*;
        use crate::model::{Chunk, Citation};
        use crate::verify;

        fn text() -> impl Strategy<Value = String> {
            prop::collection::vec(
                prop_oneof![
                    4 => proptest::char::range('a', 'z'),
                    2 => prop::sample::select(vec![
                        ' ', '"', '\\', '{', '}', '[', ']', ',', ':', '\n', '\t', '\u{0}',
                        '\u{1F}', 'é', '\u{2028}', '🙂', '/', 'u',
                    ]),
                ],
                0..12,
            )
            .prop_map(|v| v.into_iter().collect())
        }

        fn answer() -> impl Strategy<Value = GroundedAnswer> {
            let citation = (prop::sample::select(vec!["a", "b", "c#1", "zz"]), text()).prop_map(
                |(id, quote)| Citation {
                    chunk_id: id.to_string(),
                    quote,
                },
            );
            let claim = (text(), prop::collection::vec(citation, 0..3))
                .prop_map(|(text, citations)| Claim { text, citations });
            (any::<bool>(), prop::collection::vec(claim, 0..5))
                .prop_map(|(answerable, claims)| GroundedAnswer { answerable, claims })
        }

        /// The answer's JSON in one of several spellings: compact, pretty,
        /// `claims` first, or with every non-ASCII character \u-escaped.
        fn spell(answer: &GroundedAnswer, style: u8) -> String {
            match style % 4 {
                0 => serde_json::to_string(answer).unwrap(),
                1 => serde_json::to_string_pretty(answer).unwrap(),
                2 => format!(
                    "\n {{ \"claims\" : {} , \"answerable\" : {} }} \n",
                    serde_json::to_string_pretty(&answer.claims).unwrap(),
                    answer.answerable
                ),
                _ => {
                    let compact = serde_json::to_string(answer).unwrap();
                    let mut out = String::new();
                    for ch in compact.chars() {
                        if ch.is_ascii() {
                            out.push(ch);
                        } else {
                            let mut units = [0u16; 2];
                            for u in ch.encode_utf16(&mut units) {
                                out.push_str(&format!("\\u{u:04x}"));
                            }
                        }
                    }
                    out
                }
            }
        }

        /// Splits `bytes` at the given (sorted, deduplicated) cut points.
        fn pieces(bytes: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
            let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
            points.sort_unstable();
            points.dedup();
            let mut out = Vec::new();
            let mut last = 0;
            for p in points {
                out.push(bytes[last..p].to_vec());
                last = p;
            }
            out.push(bytes[last..].to_vec());
            out
        }

        fn chunks() -> ChunkSet {
            let chunk = |id: &str, content: &str| Chunk {
                chunk_id: id.into(),
                content: content.into(),
                source_title: None,
                source_url: None,
                page_number: None,
                score: None,
            };
            ChunkSet::new(vec![
                chunk("a", "abc \"quoted\" {brace} [x] é 🙂 text"),
                chunk("b", "b u / \\ back"),
                chunk("c#1", "a b c d e f g"),
            ])
            .unwrap()
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(400))]

            #[test]
            fn any_fragmentation_gives_the_same_claims(
                answer in answer(),
                style in any::<u8>(),
                cuts in prop::collection::vec(any::<usize>(), 0..12),
            ) {
                let text = spell(&answer, style);
                let mut s = ClaimStream::new();
                let mut got = Vec::new();
                for piece in pieces(text.as_bytes(), &cuts) {
                    got.extend(s.feed_bytes(&piece).unwrap());
                }
                prop_assert_eq!(s.answerable(), Some(answer.answerable));
                prop_assert_eq!(&got, &answer.claims);
                prop_assert_eq!(s.finish().unwrap(), answer);
            }

            #[test]
            fn streamed_verification_equals_whole_verification(
                answer in answer(),
                style in any::<u8>(),
                cuts in prop::collection::vec(any::<usize>(), 0..12),
            ) {
                let chunks = chunks();
                let text = spell(&answer, style);
                let provenance = Provenance {
                    trace_id: "t".into(),
                    created_at: "2026-01-01T00:00:00Z".into(),
                    question: None,
                    model: None,
                };
                let mut v = StreamVerifier::new(&chunks, MatchProfile::Default);
                let mut seen = 0;
                // Split on char boundaries: `feed` takes &str.
                let mut last = 0;
                let mut points: Vec<usize> = cuts.iter().map(|c| c % (text.len() + 1)).collect();
                points.sort_unstable();
                points.push(text.len());
                for p in points {
                    if p < last || !text.is_char_boundary(p) {
                        continue;
                    }
                    for (index, _) in v.feed(&text[last..p]).unwrap() {
                        prop_assert_eq!(index, seen);
                        seen += 1;
                    }
                    last = p;
                }
                let streamed = v.finish(provenance.clone()).unwrap();
                let whole = verify(&answer, &chunks, MatchProfile::Default, provenance);
                prop_assert_eq!(streamed, whole);
            }

            #[test]
            fn garbage_never_panics(
                bytes in prop::collection::vec(any::<u8>(), 0..200),
                cuts in prop::collection::vec(any::<usize>(), 0..8),
            ) {
                let mut s = ClaimStream::new();
                for piece in pieces(&bytes, &cuts) {
                    if s.feed_bytes(&piece).is_err() {
                        break;
                    }
                }
                let _ = s.finish();
            }

            #[test]
            fn json_like_garbage_never_panics(
                parts in prop::collection::vec(prop::sample::select(vec![
                    "{", "}", "[", "]", "\"", "\\", ",", ":", "\"claims\"", "\"answerable\"",
                    "true", "false", "\"text\"", "\"citations\"", " ", "1", "\\u12", "é",
                ]), 0..60),
            ) {
                let text: String = parts.concat();
                let mut s = ClaimStream::new();
                let _ = s.feed(&text);
                let _ = s.finish();
            }
        }
    }
}
