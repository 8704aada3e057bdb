//! Claims from spans of the provider's output text (Gemini grounding
//! segments, Cohere citations): the span is read in the channel's offset
//! unit, checked against the text the provider says it covers, and becomes
//! the claim's text.

use crate::contract::{Warning, WarningCode};
use crate::normalize::{MatchProfile, QuoteVerdict, Span, find_quote};
use crate::text::truncate_chars;

use super::builder::{Builder, covers};
use super::warnings::warning;

/// The unit a channel counts its output offsets in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OffsetUnit {
    /// UTF-8 bytes (Gemini): an offset inside a character reads nothing.
    Utf8Bytes,
    /// Unicode code points (Cohere, OpenAI Responses).
    CodePoints,
}

impl OffsetUnit {
    fn name(self) -> &'static str {
        match self {
            OffsetUnit::Utf8Bytes => "UTF-8 bytes",
            OffsetUnit::CodePoints => "characters",
        }
    }
}

/// `text[start..end)` in `unit`; `None` when the range is reversed, outside
/// the text, or (bytes) not on character boundaries.
pub(crate) fn slice_in(text: &str, start: usize, end: usize, unit: OffsetUnit) -> Option<&str> {
    if start > end {
        return None;
    }
    match unit {
        OffsetUnit::Utf8Bytes => text.get(start..end),
        OffsetUnit::CodePoints => Span::new(start, end).slice(text),
    }
}

/// The byte offset of code point `cp` in `text` (`cp == len` is the end).
pub(crate) fn code_point_to_byte(text: &str, cp: usize) -> Option<usize> {
    if cp == 0 {
        return Some(0);
    }
    text.char_indices()
        .map(|(b, _)| b)
        .chain(std::iter::once(text.len()))
        .nth(cp)
}

/// One output span of a claim, as the provider gave it.
pub(crate) struct OutputSpan<'t> {
    /// `(start, end)`, end exclusive, in the channel's unit; `None` when the
    /// provider gave no complete range.
    pub range: Option<(usize, usize)>,
    /// The text the provider says the span holds, when given.
    pub stated: Option<&'t str>,
    pub unit: OffsetUnit,
}

/// The claim text of an output span, or `None` when the claim is dropped
/// (with a warning). `text` is what the offsets count in; `whole` is the
/// whole answer, where a stated text that the span misses is looked for.
///
/// - the span holds the stated text (white space around it ignored): the
///   stated text;
/// - no stated text: the span's text, when it has a letter or digit;
/// - otherwise `span_out_of_range`, and the stated text is kept only when it
///   occurs in the answer.
pub(crate) fn claim_text(
    b: &mut Builder<'_>,
    index: usize,
    text: &str,
    whole: &str,
    span: &OutputSpan<'_>,
    profile: MatchProfile,
) -> Option<String> {
    let unit = span.unit;
    let slice = span
        .range
        .and_then(|(start, end)| slice_in(text, start, end, unit));
    let Some(stated) = span.stated else {
        return match (span.range, slice) {
            (_, Some(s)) if s.chars().any(char::is_alphanumeric) => Some(s.to_string()),
            (Some((start, end)), _) => {
                b.warn(span_warning(
                    index,
                    start,
                    end,
                    text,
                    unit,
                    "lies outside the answer, cuts a character or holds no word, and the claim has no text of its own; the claim was dropped",
                ));
                None
            }
            (None, _) => {
                b.warn(warning(
                    WarningCode::EmptyClaimText,
                    Some(index),
                    None,
                    None,
                    format!("Claim {index} has neither text nor a complete span and was dropped."),
                ));
                None
            }
        };
    };
    if slice.is_some_and(|s| covers(s, stated, profile)) {
        return Some(stated.to_string());
    }
    let in_answer = matches!(find_quote(whole, stated, profile), QuoteVerdict::Found(_));
    if let Some((start, end)) = span.range {
        let what = match (slice.is_some(), in_answer) {
            (false, true) => {
                "lies outside the answer (or cuts a character); the claim's text occurs in the answer, so the claim was kept"
            }
            (false, false) => {
                "lies outside the answer (or cuts a character) and the claim's text is not in the answer; the claim was dropped"
            }
            (true, true) => {
                "does not cover the claim's text; the text occurs elsewhere in the answer, so the claim was kept"
            }
            (true, false) => {
                "does not cover the claim's text, which is not in the answer; the claim was dropped"
            }
        };
        b.warn(span_warning(index, start, end, text, unit, what));
    } else if !in_answer {
        b.warn(warning(
            WarningCode::SpanOutOfRange,
            Some(index),
            None,
            None,
            format!(
                "Claim {index} has no complete span and its text {:?} is not in the answer; the claim was dropped.",
                truncate_chars(stated, 120)
            ),
        ));
    }
    in_answer.then(|| stated.to_string())
}

fn span_warning(
    index: usize,
    start: usize,
    end: usize,
    text: &str,
    unit: OffsetUnit,
    what: &str,
) -> Warning {
    let len = match unit {
        OffsetUnit::Utf8Bytes => text.len(),
        OffsetUnit::CodePoints => text.chars().count(),
    };
    warning(
        WarningCode::SpanOutOfRange,
        Some(index),
        None,
        None,
        format!(
            "The span {start}..{end} ({}, end exclusive) of claim {index} {what} (the text has {len} {}).",
            unit.name(),
            unit.name()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_and_code_points_slice_differently_past_astral_characters() {
        let t = "𝄞 é ok";
        // 𝄞 is 4 bytes, é 2: "ok" is bytes 8..10, code points 4..6.
        assert_eq!(slice_in(t, 8, 10, OffsetUnit::Utf8Bytes), Some("ok"));
        assert_eq!(slice_in(t, 4, 6, OffsetUnit::CodePoints), Some("ok"));
        // Inside a character, reversed, beyond the end: nothing.
        assert_eq!(slice_in(t, 1, 4, OffsetUnit::Utf8Bytes), None);
        assert_eq!(slice_in(t, 6, 4, OffsetUnit::CodePoints), None);
        assert_eq!(slice_in(t, 0, usize::MAX, OffsetUnit::Utf8Bytes), None);
        assert_eq!(slice_in(t, 0, usize::MAX, OffsetUnit::CodePoints), None);
        assert_eq!(code_point_to_byte(t, 1), Some(4));
        assert_eq!(code_point_to_byte(t, 6), Some(10));
        assert_eq!(code_point_to_byte(t, 7), None);
        assert_eq!(code_point_to_byte(t, usize::MAX), None);
    }
}
