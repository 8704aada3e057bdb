//! Sentence splitting inside a block, and the clean-up of a claim's text
//! (markers, quotes and list syntax removed).

use std::ops::Range;

use super::markers::{CODE, MARK, Marker, QUOTED, QuoteSpan};

/// Splits a block into sentences (ranges relative to `s`).
pub(super) fn sentences(
    s: &str,
    mask: &[u8],
    quotes: &[QuoteSpan],
    markers: &[Marker],
) -> Vec<Range<usize>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut seg_start = 0;
    let skip_ws = |mut k: usize| {
        while k < b.len() && b[k].is_ascii_whitespace() {
            k += 1;
        }
        k
    };
    let marker_at = |k: usize| {
        markers
            .binary_search_by_key(&k, |m| m.range.start)
            .ok()
            .map(|i| &markers[i])
    };
    // Leading style ("[1] Refunds… [2] Shipping…"): markers after a full
    // stop open the next sentence instead of closing this one.
    let leading = marker_at(skip_ws(0)).is_some();
    let mut pos = 0;
    while pos < b.len() {
        let Some(c) = s[pos..].chars().next() else {
            break;
        };
        let here = pos;
        pos += c.len_utf8();
        if mask[here] & (CODE | MARK) != 0 {
            continue;
        }
        let closes_quote = matches!(c, '"' | '”')
            && quotes.binary_search_by_key(&pos, |q| q.outer.end).is_ok()
            && s[..here].chars().next_back().is_some_and(is_terminator);
        let term = closes_quote || (is_terminator(c) && mask[here] & QUOTED == 0);
        if !term {
            continue;
        }
        if c == '.' && !closes_quote && is_abbreviation(&s[seg_start..here]) {
            continue;
        }
        let mut j = pos;
        // Runs of terminators ("?!", "...") and closing marks.
        while let Some(n) = s[j..].chars().next() {
            if is_terminator(n) || matches!(n, '"' | '”' | '’' | ')' | '*' | '_') {
                j += n.len_utf8();
            } else {
                break;
            }
        }
        let mut k = j;
        let mut absorbed = false;
        while let Some(m) = marker_at(skip_ws(k)).filter(|_| !leading) {
            k = m.range.end;
            absorbed = true;
        }
        if absorbed {
            while k < b.len() && matches!(b[k], b'.' | b',' | b';') {
                k += 1;
            }
            j = k;
        }
        pos = j;
        let next = skip_ws(j);
        if next >= b.len() {
            break;
        }
        let next_char = s[next..].chars().next().unwrap_or(' ');
        // CJK full stops end a sentence without a following space.
        let cjk = matches!(c, '。' | '！' | '？');
        let opens = leading && marker_at(next).is_some();
        if absorbed || cjk || opens || (next > j && !next_char.is_lowercase()) {
            out.push(seg_start..j);
            seg_start = next;
            pos = next;
        }
    }
    if seg_start < b.len() {
        out.push(seg_start..b.len());
    }
    out
}

/// The absolute range of the last sentence of a block without markers.
pub(super) fn last_sentence(s: &str, base: usize) -> Range<usize> {
    let mask = vec![0u8; s.len()];
    let sents = sentences(s, &mask, &[], &[]);
    sents
        .last()
        .map_or(base..base + s.len(), |r| r.start + base..r.end + base)
}

fn is_terminator(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '。' | '！' | '？' | '…')
}

/// Whether the text before a period ends with a common abbreviation or an initial.
fn is_abbreviation(before: &str) -> bool {
    let word: String = before
        .chars()
        .rev()
        .take_while(|c| c.is_alphanumeric() || *c == '.')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    if word.chars().count() == 1 && word.chars().all(char::is_uppercase) {
        return true;
    }
    matches!(
        word.to_lowercase().as_str(),
        "e.g"
            | "i.e"
            | "etc"
            | "vs"
            | "mr"
            | "mrs"
            | "ms"
            | "dr"
            | "prof"
            | "no"
            | "fig"
            | "p"
            | "pp"
            | "approx"
            | "inc"
            | "ltd"
            | "co"
            | "st"
            | "cf"
            | "u.s"
            | "sec"
            | "art"
            | "vol"
            | "ch"
    )
}

/// Removes Markdown link syntax, URLs and emphasis from an item; returns the
/// text and the URLs it held.
pub(super) fn clean_item(text: &str) -> (String, Vec<String>) {
    let mut urls = Vec::new();
    let mut out = String::new();
    let mut rest = text.trim();
    // Markdown links: keep the text, collect the URL.
    while let Some(open) = rest.find('[') {
        let Some(close_rel) = rest[open..].find("](") else {
            break;
        };
        let close = open + close_rel;
        let Some(end_rel) = rest[close + 2..].find(')') else {
            break;
        };
        let end = close + 2 + end_rel;
        out.push_str(&rest[..open]);
        out.push_str(&rest[open + 1..close]);
        urls.push(rest[close + 2..end].trim().to_string());
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    let mut words = Vec::new();
    for w in out.split_whitespace() {
        let bare = w.trim_matches(|c| matches!(c, '<' | '>' | '(' | ')' | ',' | ';'));
        if bare.starts_with("http://") || bare.starts_with("https://") {
            urls.push(bare.to_string());
        } else {
            words.push(w);
        }
    }
    let joined = words.join(" ");
    let cleaned = joined
        .trim_matches(|c| matches!(c, '*' | '_' | '-' | '–' | '—' | ':' | ' '))
        .replace("**", "")
        .replace("()", "")
        .replace("<>", "");
    (cleaned.trim().to_string(), urls)
}

/// `text` with its quotations removed.
pub(super) fn strip_quoted(text: &str, quotes: &[QuoteSpan]) -> String {
    let mut out = String::new();
    let mut at = 0;
    for q in quotes {
        if q.outer.start >= at {
            out.push_str(&text[at..q.outer.start]);
            at = q.outer.end;
        }
    }
    out.push_str(&text[at..]);
    out
}

/// The segment text with the markers cut out (`base` is the segment's offset).
pub(super) fn strip_markers(text: &str, base: usize, markers: &[Marker]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let mut ranges: Vec<Range<usize>> = markers
        .iter()
        .filter(|m| m.range.start >= base && m.range.end <= base + text.len())
        .map(|m| m.range.start - base..m.range.end - base)
        .collect();
    ranges.sort_by_key(|r| r.start);
    for r in ranges {
        if r.start >= at {
            out.push_str(&text[at..r.start]);
            at = r.end;
        }
    }
    out.push_str(&text[at..]);
    out
}

/// Collapses white space and removes the space left before punctuation.
pub(super) fn clean_claim_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if space && !matches!(c, '.' | ',' | ';' | ':' | '!' | '?' | ')') {
            out.push(' ');
        }
        space = false;
        out.push(c);
    }
    out
}
