//! Small text helpers shared by the verifier, the prose parser and the
//! native converters.

/// `s` cut to its first `max_chars` characters (Unicode scalar values), with
/// `…` appended when anything was cut; `s` unchanged when it is not longer.
///
/// Messages quote model and chunk text through this, so that one long value
/// cannot flood a warning or a log line.
///
/// ```
/// use groundcite_core::truncate_chars;
///
/// assert_eq!(truncate_chars("Refunds", 3), "Ref…");
/// assert_eq!(truncate_chars("Refunds", 7), "Refunds");
/// assert_eq!(truncate_chars("déjà vu", 4), "déjà…");
/// ```
pub fn truncate_chars(s: &str, max_chars: usize) -> String {
    match s.char_indices().nth(max_chars) {
        Some((b, _)) => format!("{}…", &s[..b]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::truncate_chars;

    #[test]
    fn cuts_at_characters_not_bytes() {
        assert_eq!(truncate_chars("", 0), "");
        assert_eq!(truncate_chars("a", 0), "…");
        assert_eq!(truncate_chars("ab", 2), "ab");
        assert_eq!(truncate_chars("€€€", 2), "€€…");
    }
}
