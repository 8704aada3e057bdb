//! The one sentence rule: how source text is cut into the units a quote of
//! the embedded model covers, a candidate quote is ranked by, and an
//! extractive claim states. Used by the index (sentence vectors), the
//! ranker of candidate quotes and the decoding grammar, so the three always
//! agree on what a sentence is.

use std::ops::Range;

/// Splits text into sentences, each with the white space that follows it:
/// a sentence ends after `.`, `!` or `?` (and any closing quotes or
/// brackets) followed by white space, unless the dot closes a known
/// abbreviation that reads on ("e.g.", "etc." before a lower-case word, "No."
/// before a number), or at a line break that ends a line of
/// its own ([`breaks_line`]). A single line break inside a paragraph of
/// running text does not end a sentence: Markdown renders it as a space,
/// and a file wrapped at a fixed width would otherwise be cut into
/// half-sentences. Concatenating the pieces gives `text` back.
pub fn sentences(text: &str) -> Vec<&str> {
    sentence_spans(text).into_iter().map(|r| &text[r]).collect()
}

/// A sentence joined across line breaks is cut back at them when it grows
/// longer than this many bytes: lines without punctuation (a list without
/// markers, a key-value block) are units of their own, not one long run.
pub const MAX_JOINED_SENTENCE: usize = 320;

/// How a text marks up its lines, as far as the sentence rule cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Markup {
    /// Markdown: also right for plain text and for the text extracted from
    /// PDF, HTML, DOCX, ODT and EPUB.
    #[default]
    Markdown,
    /// reStructuredText: section adornments of any punctuation (`~~~~`,
    /// `^^^^`), explicit markup (`.. note::`) and field lists (`:param x:`)
    /// are lines of their own, and there are no code fences.
    Rst,
    /// AsciiDoc: section titles (`== Setup`), attribute entries (`:toc:`),
    /// block attributes (`[source,bash]`), block titles (`.Example`),
    /// comments, block macros (`image::x.png[]`) and block delimiters
    /// (`----`, `====`) are lines of their own and state nothing; listing and
    /// literal blocks (`----`, `....`) are code, comment and passthrough
    /// blocks (`////`, `++++`) are never quoted.
    AsciiDoc,
}

/// The byte ranges of [`sentences`].
pub fn sentence_spans(text: &str) -> Vec<Range<usize>> {
    sentence_spans_in(text, Markup::Markdown)
}

/// [`sentence_spans`] of a text in `markup`.
pub fn sentence_spans_in(text: &str, markup: Markup) -> Vec<Range<usize>> {
    let soft = soft_breaks(text, markup);
    let mut out = Vec::new();
    for r in spans(text, &soft) {
        let s = &text[r.clone()];
        let inner = s.trim_end();
        if r.len() > MAX_JOINED_SENTENCE && inner.contains('\n') {
            // Too long to be one wrapped sentence: every line break ends.
            out.extend(
                spans(s, &[])
                    .into_iter()
                    .map(|x| r.start + x.start..r.start + x.end),
            );
        } else {
            out.push(r);
        }
    }
    out
}

/// Splits `text` at sentence ends; a line break at a byte offset in `soft`
/// (sorted) does not end a sentence.
fn spans(text: &str, soft: &[usize]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut line_start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let mut end = None;
        if c == '\n' {
            line_start = i + 1;
            if soft.binary_search(&i).is_err() {
                end = Some(i + 1);
            }
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
            // `1. ` opening a numbered list item is not a sentence end.
            let line = &text[line_start..i];
            let ordinal = c == '.'
                && (1..=3).contains(&line.trim_start().len())
                && line.trim_start().bytes().all(|b| b.is_ascii_digit());
            // A table row is one record: a cell's sentences end with the
            // row, never inside it ("| QP-401 | Sign in again. Sessions
            // end after 30 days. |" without its code states nothing).
            let reads_on = ordinal || line.trim_start().starts_with('|');
            if !reads_on
                && chars.peek().is_none_or(|&(_, d)| d.is_whitespace())
                && !(j == i + 1 && abbreviation(&text[line_start..i], &text[j..]))
            {
                end = Some(j);
            }
        }
        if let Some(mut e) = end {
            // The white space after a sentence belongs to it.
            while let Some(&(k, d)) = chars.peek() {
                if d.is_whitespace() {
                    chars.next();
                    e = k + d.len_utf8();
                    if d == '\n' {
                        line_start = e;
                    }
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

/// Abbreviations that are never the last word of a sentence: "e.g. `ls`"
/// reads on, whatever follows.
const ABBREVIATIONS_ALWAYS: &[&str] = &["e.g", "i.e", "eg", "ie", "cf", "vs", "viz"];

/// Abbreviations that end a sentence only when a capital letter follows:
/// "files, etc. and more" reads on, "files, etc. Then" does not.
const ABBREVIATIONS_UNLESS_CAPITAL: &[&str] = &["etc", "approx", "incl", "esp", "resp", "al"];

/// Abbreviations that read on before a number: "No. 5", "p. 12", "Fig. 3".
const ABBREVIATIONS_BEFORE_NUMBER: &[&str] =
    &["no", "nos", "p", "pp", "fig", "vol", "sec", "ch", "art"];

/// Titles that read on before a capitalised name: "Dr. Smith".
const TITLES: &[&str] = &["Mr", "Mrs", "Ms", "Dr", "Prof"];

/// Whether the `.` that ends `before` (the line up to it, the dot left out)
/// closes an abbreviation that reads on into `after` (the text after the
/// dot) rather than a sentence. Only a short, fixed list counts, and a dotted
/// initialism ("U.S", "a.m"): anything else keeps the plain rule, so a
/// sentence that really ends there still ends.
fn abbreviation(before: &str, after: &str) -> bool {
    let word = before
        .rsplit(char::is_whitespace)
        .next()
        .unwrap_or("")
        .trim_start_matches(['(', '[', '"', '\'', '\u{201C}', '\u{2018}']);
    if word.is_empty() {
        return false;
    }
    let next = after.trim_start().chars().next();
    let capital = next.is_some_and(char::is_uppercase);
    let digit = next.is_some_and(|c| c.is_ascii_digit());
    let lower = word.to_ascii_lowercase();
    let lower = lower.as_str();
    if ABBREVIATIONS_ALWAYS.contains(&lower) {
        return next.is_some();
    }
    if ABBREVIATIONS_UNLESS_CAPITAL.contains(&lower) || is_initialism(word) {
        return next.is_some() && !capital;
    }
    if ABBREVIATIONS_BEFORE_NUMBER.contains(&lower) {
        return digit;
    }
    TITLES.contains(&word) && capital
}

/// `U.S`, `a.m`, `e.g`: single letters joined by dots (the final dot is the
/// one being judged).
fn is_initialism(word: &str) -> bool {
    let parts: Vec<&str> = word.split('.').collect();
    parts.len() >= 2
        && parts
            .iter()
            .all(|p| p.chars().count() == 1 && p.chars().all(char::is_alphabetic))
}

/// The byte offsets of the line breaks that continue a paragraph's running
/// text: those between two lines of which neither [`breaks_line`], outside
/// fenced code.
fn soft_breaks(text: &str, markup: Markup) -> Vec<usize> {
    let mut soft = Vec::new();
    let mut in_fence = false;
    let mut line_start = 0;
    while let Some(n) = text[line_start..].find('\n') {
        let nl = line_start + n;
        let line = &text[line_start..nl];
        let next_end = text[nl + 1..].find('\n').map_or(text.len(), |k| nl + 1 + k);
        let next = &text[nl + 1..next_end];
        let fence = |l: &str| match markup {
            Markup::Markdown => is_fence(l),
            Markup::AsciiDoc => is_fence(l) || asciidoc_verbatim(l.trim_end()).is_some(),
            Markup::Rst => false,
        };
        if fence(line) {
            in_fence = !in_fence;
        } else if !in_fence
            && !breaks_line(line, true, markup)
            && !breaks_line(next, false, markup)
            && !fence(next)
        {
            soft.push(nl);
        }
        line_start = nl + 1;
    }
    soft
}

fn is_fence(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("```") || t.starts_with("~~~")
}

/// Whether a line stands on its own rather than continuing (or being
/// continued by) running text: a blank line, a Markdown heading, table row,
/// block quote, rule or HTML comment's edge; a list item when it is the
/// `next` line (a wrapped item's own lines continue it); the line before a
/// Markdown hard break (two trailing spaces or a backslash).
fn breaks_line(line: &str, before: bool, markup: Markup) -> bool {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let t = line.trim();
    if markup == Markup::Rst
        && (is_adornment(t) || t == ".." || t.starts_with(".. ") || is_field(t))
    {
        return true;
    }
    if markup == Markup::AsciiDoc {
        if is_asciidoc_markup(t) || asciidoc_title(t).is_some() {
            return true;
        }
        // ` +` ends a line with a hard break; `. item` is an ordered item.
        if before && line.ends_with(" +") {
            return true;
        }
        if !before && is_asciidoc_ordered_item(t) {
            return true;
        }
    }
    if t.is_empty() || t.starts_with('#') || t.starts_with('|') || t.starts_with('>') {
        return true;
    }
    if t.len() >= 3 && t.chars().all(|c| matches!(c, '-' | '=' | '*' | '_' | ' ')) {
        return true;
    }
    if is_markup_line(t) || is_admonition_fence(t) {
        return true;
    }
    // An HTML comment's first and last lines: what it hides is not part of
    // the text around it.
    if markup == Markup::Markdown && (t.starts_with("<!--") || t.ends_with("-->")) {
        return true;
    }
    if before {
        return line.ends_with("  ") || line.ends_with('\\');
    }
    is_list_item(line.trim_start())
}

/// `- x`, `* x`, `+ x`, `• x`, `1. x`, `1) x`.
fn is_list_item(t: &str) -> bool {
    let mut cs = t.chars();
    match cs.next() {
        Some('-' | '*' | '+' | '\u{2022}') => cs.next().is_none_or(char::is_whitespace),
        Some(c) if c.is_ascii_digit() => {
            let rest = t.trim_start_matches(|c: char| c.is_ascii_digit());
            t.len() - rest.len() <= 3 && (rest.starts_with(". ") || rest.starts_with(") "))
        }
        _ => false,
    }
}

/// The longest block a sentence that ends in a colon carries with it
/// ([`introduced_block`]), in bytes: a command or a short example, not a
/// page.
pub const MAX_INTRODUCED: usize = 300;

/// What a sentence ending at `end` introduces when it ends in a colon ("To
/// list the printers, run:"): the block right after it, which is often the
/// answer itself (a command, an example, a short list). That block is the
/// lines after the sentence's own line (blank lines skipped) up to the next
/// blank line, or, when they open a code fence (Markdown ` ``` `, `~~~`;
/// AsciiDoc `----`, `....`), the fenced lines without the fences. Whole
/// lines only, at most [`MAX_INTRODUCED`] bytes, white space trimmed.
/// `None` when the sentence does not end in a colon or ends mid-line,
/// nothing follows it, the block is a heading, a table or a rule, or its
/// first line alone is too long.
pub fn introduced_block(text: &str, end: usize, markup: Markup) -> Option<Range<usize>> {
    let before = text.get(..end)?.trim_end();
    if !before.ends_with(':') {
        return None;
    }
    // The sentence must end its line.
    let rest = &text[end..];
    let line_end = end + rest.find('\n')?;
    if !text[end..line_end].trim().is_empty() {
        return None;
    }
    let mut lines = text[line_end + 1..]
        .split_inclusive('\n')
        .scan(line_end + 1, |at, l| {
            let start = *at;
            *at += l.len();
            Some((start, l))
        })
        .skip_while(|(_, l)| l.trim().is_empty())
        .peekable();
    let &(_, first) = lines.peek()?;
    let first = first.trim();
    let fenced = match markup {
        Markup::Markdown => is_fence(first).then(|| first.as_bytes()[0]),
        Markup::AsciiDoc => asciidoc_verbatim(first).filter(|&c| matches!(c, b'-' | b'.')),
        Markup::Rst => None,
    };
    if fenced.is_some() {
        lines.next();
    } else if first.starts_with('#')
        || first.starts_with('|')
        || (first.len() >= 3
            && first
                .chars()
                .all(|c| matches!(c, '-' | '=' | '*' | '_' | ' ')))
        || (markup == Markup::AsciiDoc && asciidoc_title(first).is_some())
    {
        return None;
    }
    let mut block: Option<Range<usize>> = None;
    for (start, line) in lines {
        let t = line.trim();
        let closes = match fenced {
            Some(c) => {
                t.as_bytes().first() == Some(&c) && (is_fence(t) || asciidoc_verbatim(t).is_some())
            }
            None => t.is_empty(),
        };
        if closes {
            break;
        }
        if t.is_empty() {
            continue;
        }
        let lead = line.len() - line.trim_start().len();
        let r = match &block {
            Some(b) => b.start..start + line.trim_end().len(),
            None => start + lead..start + line.trim_end().len(),
        };
        if r.len() > MAX_INTRODUCED {
            break;
        }
        block = Some(r);
    }
    block.filter(|b| text[b.clone()].chars().any(char::is_alphanumeric))
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

/// The spans of [`sentence_spans`] that can state a fact: each
/// [`is_statement`], and not the text of a setext heading (a line
/// underlined by the next one, `===` or `---`).
pub fn statement_spans(text: &str) -> Vec<Range<usize>> {
    statement_spans_in(text, Markup::Markdown)
}

/// [`statement_spans`] of a text in `markup`: in Markdown, a table's header
/// row (its column names state nothing) and HTML comments state nothing;
/// in reStructuredText, explicit
/// markup (`.. image:: …`) and section titles (underlined with any
/// punctuation) state nothing either; in AsciiDoc, neither do section
/// titles, markup lines ([`is_asciidoc_markup`]) or anything inside a
/// comment or passthrough block.
pub fn statement_spans_in(text: &str, markup: Markup) -> Vec<Range<usize>> {
    let hidden = match markup {
        Markup::AsciiDoc => asciidoc_hidden(text),
        Markup::Markdown => html_comments(text),
        Markup::Rst => Vec::new(),
    };
    sentence_spans_in(text, markup)
        .into_iter()
        .filter(|r| {
            let s = &text[r.clone()];
            let t = s.trim();
            is_statement(s)
                && !is_underlined(text, r.end, markup)
                && !hidden.iter().any(|h| h.start < r.end && r.start < h.end)
                && !is_table_header(text, r.clone(), markup)
                && !(markup == Markup::Rst && (s.trim_start().starts_with("..") || is_adornment(t)))
                && !(markup == Markup::AsciiDoc
                    && (is_asciidoc_markup(t) || asciidoc_title(t).is_some()))
        })
        .collect()
}

/// An AsciiDoc section title (`= Document`, `== Section`, up to six `=`):
/// its level (the number of `=`) and its text.
pub fn asciidoc_title(line: &str) -> Option<(usize, &str)> {
    let level = line.bytes().take_while(|&b| b == b'=').count();
    let title = line[level..].strip_prefix([' ', '\t'])?.trim();
    ((1..=6).contains(&level) && !title.is_empty()).then_some((level, title))
}

/// Whether a (trimmed) AsciiDoc line is markup rather than text: an
/// attribute entry (`:toc: left`), a block attribute or anchor line
/// (`[source,bash]`, `[[install]]`), a block title (`.Example`), a comment
/// (`// note`), a block macro (`image::logo.png[]`, `include::a.adoc[]`,
/// `ifdef::env[]`), a block delimiter (`----`, `====`, `--`, `|===`) or a
/// list continuation (`+`).
pub fn is_asciidoc_markup(t: &str) -> bool {
    if t == "+" || is_field(t) || (t.starts_with('[') && t.ends_with(']')) {
        return true;
    }
    if let Some(rest) = t.strip_prefix('.')
        && rest.starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '*' || c == '`')
    {
        return true;
    }
    if t.starts_with("//") && !t.starts_with("////") {
        return true;
    }
    if let Some((name, target)) = t.split_once("::")
        && !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        && let Some((path, _)) = target.split_once('[')
        && !path.contains(char::is_whitespace)
        && target.ends_with(']')
    {
        return true;
    }
    let table = ["|===", ",===", ":===", "!==="].contains(&t);
    table
        || (is_adornment(t)
            && matches!(
                t.as_bytes()[0],
                b'-' | b'.' | b'=' | b'*' | b'_' | b'+' | b'/'
            ))
}

/// The delimiter of an AsciiDoc verbatim block that opens or closes on
/// `line`: listing (`----`), literal (`....`), passthrough (`++++`) or
/// comment (`////`), four or more of one character. Inside one, lines are
/// verbatim: a heading or an attribute there is not one.
pub fn asciidoc_verbatim(line: &str) -> Option<u8> {
    let b = line.as_bytes();
    let first = *b.first()?;
    (b.len() >= 4 && matches!(first, b'-' | b'.' | b'+' | b'/') && b.iter().all(|&c| c == first))
        .then_some(first)
}

/// `. item`, `.. item`: an AsciiDoc ordered list item.
fn is_asciidoc_ordered_item(t: &str) -> bool {
    let dots = t.bytes().take_while(|&b| b == b'.').count();
    (1..=5).contains(&dots) && t[dots..].starts_with(' ')
}

/// The byte ranges of AsciiDoc comment (`////`) and passthrough (`++++`)
/// blocks, delimiters included, and of the header lines that follow a
/// document title (`= Title`, then its author and revision lines up to the
/// first blank line): text nobody reads as prose.
fn asciidoc_hidden(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut open: Option<(usize, &str)> = None;
    let mut header = false;
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim_end();
        match open {
            Some((from, delim)) if t == delim => {
                out.push(from..start + line.len());
                open = None;
            }
            Some(_) => {}
            None if header && !t.trim().is_empty() => out.push(start..start + line.len()),
            None => {
                header = matches!(asciidoc_title(t.trim()), Some((1, _)));
                if matches!(asciidoc_verbatim(t), Some(b'/' | b'+')) {
                    open = Some((start, t));
                }
            }
        }
        start += line.len();
    }
    if let Some((from, _)) = open {
        out.push(from..text.len());
    }
    out
}

/// A reStructuredText adornment: two or more of one punctuation character
/// and nothing else (`=====`, `~~~`, `^^^^`, `""""`).
pub fn is_adornment(line: &str) -> bool {
    let t = line.trim_end();
    let mut chars = t.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    first.is_ascii_punctuation() && t.len() >= 2 && chars.all(|c| c == first)
}

/// A reStructuredText field-list line (`:param name: …`, `:returns:`); a
/// line that opens with a role (":ref:`install` explains …") is text.
pub fn is_field(t: &str) -> bool {
    let Some(rest) = t.strip_prefix(':') else {
        return false;
    };
    let Some(i) = rest.find(':') else {
        return false;
    };
    let after = &rest[i + 1..];
    i > 0 && i <= 40 && !rest.starts_with(' ') && (after.is_empty() || after.starts_with(' '))
}

/// Whether the line after the one that holds byte `end - 1` underlines it
/// as a setext heading: up to three spaces, then two or more `=` or two or
/// more `-`, and only trailing white space.
fn is_underlined(text: &str, end: usize, markup: Markup) -> bool {
    let Some(next) = next_line(text, end) else {
        return false;
    };
    match markup {
        Markup::Markdown => setext_level(next).is_some(),
        Markup::Rst => !next.starts_with(' ') && is_adornment(next.trim_end()),
        // AsciiDoc's titles are `=` lines; an underline is a delimiter.
        Markup::AsciiDoc => false,
    }
}

/// The line after a sentence that ends at `end`, when only white space
/// follows the sentence on its own line.
fn next_line(text: &str, end: usize) -> Option<&str> {
    let last = text.get(..end)?.trim_end();
    let rest = text.get(last.len()..)?;
    let nl = rest.find('\n')?;
    rest[..nl]
        .trim()
        .is_empty()
        .then(|| rest[nl + 1..].split('\n').next().unwrap_or(""))
}

/// Whether `line` is a Markdown table's delimiter row (`|---|:--:|`,
/// `--- | ---`), the line under its header row.
fn is_table_delimiter(line: &str) -> bool {
    let t = line.trim();
    t.contains('-')
        && t.contains('|')
        && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'))
}

/// Whether the sentence at `r` is a Markdown table's header row: a row
/// whose next line is the delimiter row.
fn is_table_header(text: &str, r: Range<usize>, markup: Markup) -> bool {
    markup == Markup::Markdown
        && text.get(r.clone()).is_some_and(|s| s.contains('|'))
        && next_line(text, r.end).is_some_and(is_table_delimiter)
}

/// The most body rows a quoted row may sit below its table's header row for
/// [`table_header`] to find it: bounds the walk up a hostile chunk.
const MAX_TABLE_ROWS: usize = 500;

/// The header row of the Markdown table whose body row holds byte `at` of
/// `text`: the byte range of the line above the table's delimiter row
/// (`|---|---|`), white space trimmed. `None` when that line is not a
/// table's body row (a header row, a delimiter row, text outside a table),
/// when the table's header is not in `text` (a chunk that starts inside a
/// table), or when the row sits more than [`MAX_TABLE_ROWS`] rows below
/// it.
///
/// A quote of a row ("| RM-4221 | 401 | The key was revoked. |") says
/// little without its column names; a renderer shows this row above it.
/// Any text is read this way, whatever its format: a line with a `|`
/// under a delimiter row is a table in every Markdown dialect that has
/// tables, and nothing else writes one.
pub fn table_header(text: &str, at: usize) -> Option<Range<usize>> {
    let at = at.min(text.len());
    if !text.is_char_boundary(at) {
        return None;
    }
    let line_start = |end: usize| text[..end].rfind('\n').map_or(0, |i| i + 1);
    let line_of = |start: usize| {
        let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        (start, end)
    };
    let (start, end) = line_of(line_start(at));
    let row = &text[start..end];
    if !row.contains('|') || is_table_delimiter(row) {
        return None;
    }
    // The header row itself: its next line is the delimiter.
    if end < text.len() {
        let (ns, ne) = line_of(end + 1);
        if is_table_delimiter(&text[ns..ne]) {
            return None;
        }
    }
    let mut above = start;
    for _ in 0..=MAX_TABLE_ROWS {
        if above == 0 {
            return None;
        }
        let (s, e) = line_of(line_start(above - 1));
        let line = &text[s..e];
        if is_table_delimiter(line) {
            if s == 0 {
                return None;
            }
            let (hs, he) = line_of(line_start(s - 1));
            let header = &text[hs..he];
            if !header.contains('|') || is_table_delimiter(header) {
                return None;
            }
            let lead = header.len() - header.trim_start().len();
            return Some(hs + lead..hs + lead + header.trim().len());
        }
        if !line.contains('|') {
            return None;
        }
        above = s;
    }
    None
}

/// Byte ranges of the HTML comments (`<!-- … -->`) of Markdown `text`:
/// hidden when the page is rendered (an editor's note, an export's
/// residue), so never quoted. One left open ends with its line.
fn html_comments(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = text.get(from..).and_then(|t| t.find("<!--")) {
        let start = from + i;
        let body = start + 4;
        let end = match text[body..].find("-->") {
            Some(j) => body + j + 3,
            None => text[body..].find('\n').map_or(text.len(), |j| body + j),
        };
        out.push(start..end);
        from = end;
    }
    out
}

/// The level of a Markdown setext heading underline (`===` → 1, `---` →
/// 2), when `line` is one: up to three spaces, then two or more `=` or two
/// or more `-`, and only trailing white space. The chunker reads headings
/// and the sentence rule leaves their text out with this one rule.
pub fn setext_level(line: &str) -> Option<usize> {
    let indent = line.bytes().take_while(|&b| b == b' ').count();
    if indent > 3 {
        return None;
    }
    let rule = line[indent..].trim_end();
    let level = match rule.bytes().next()? {
        b'=' => 1,
        b'-' => 2,
        _ => return None,
    };
    (rule.len() >= 2 && rule.bytes().all(|b| b == rule.as_bytes()[0])).then_some(level)
}

/// Whether `line` holds only HTML or JSX tags (`<Tabs>`, `</TabItem>`,
/// `<Admonition type="tip">`): markup around text, never a statement,
/// and a line of its own rather than part of a sentence.
pub fn is_markup_line(line: &str) -> bool {
    let mut t = line.trim();
    if t.is_empty() {
        return false;
    }
    while !t.is_empty() {
        let Some(rest) = t.strip_prefix('<') else {
            return false;
        };
        let name = rest.strip_prefix('/').unwrap_or(rest);
        if !name.starts_with(|c: char| c.is_ascii_alphabetic()) && !name.starts_with('>') {
            return false;
        }
        let Some(close) = rest.find('>') else {
            return false;
        };
        t = rest[close + 1..].trim_start();
    }
    true
}

/// Whether `line` opens or closes an admonition, as documentation sites
/// write them: Docusaurus and VitePress `:::tip Title` / `:::`, MkDocs
/// `!!! note "Title"` and its collapsible `??? note`. Markup around text:
/// a line of its own, never a statement (the title is a label, not a fact).
pub fn is_admonition_fence(line: &str) -> bool {
    let t = line.trim();
    if let Some(rest) = t.strip_prefix(":::") {
        // `:::`, `::::`, `:::tip`, `::: warning Title`, `:::note{title="x"}`.
        let rest = rest.trim_start_matches(':').trim_start();
        return rest.is_empty() || rest.starts_with(|c: char| c.is_ascii_alphabetic());
    }
    let rest = t
        .strip_prefix("!!!")
        .or_else(|| t.strip_prefix("???+"))
        .or_else(|| t.strip_prefix("???"));
    rest.is_some_and(|r| {
        r.starts_with(' ')
            && r.trim_start()
                .starts_with(|c: char| c.is_ascii_alphabetic())
    })
}

/// The question an FAQ entry asks, when `line` is one: a line that asks
/// (it ends with `?`, or opens with `Q:`, `Q.` or `Question:`) and stands
/// as a label, wholly in bold or italics (`**How do I cancel?**`,
/// `**Q: My notes are gone.**`), or opening with the `Q:` label in any
/// form (`Q: …`, `**Q:** …`). Returns the question without its emphasis
/// and label. A plain line that ends with `?` is not one here: that is
/// running text ("Forgot your password? …" reads on); the chunker treats
/// a paragraph of one such line as a section's title on its own.
pub fn faq_question(line: &str) -> Option<&str> {
    let t = line.trim();
    if t.len() > 300 || t.starts_with(['#', '|', '>', '-', '+', '<']) {
        return None;
    }
    let (inner, emphasised) = strip_emphasis(t);
    let (question, labelled) = strip_question_label(inner);
    let asks = labelled || question.ends_with('?');
    let question = question.trim();
    (asks && (emphasised || labelled) && !question.is_empty()).then_some(question)
}

/// `t` without emphasis around the whole of it (`**x**`, `__x__`, `*x*`,
/// `_x_`), and whether there was some. A label in bold (`**Q:** x`) loses
/// its markers too.
fn strip_emphasis(t: &str) -> (&str, bool) {
    for m in ["**", "__", "*", "_"] {
        if let Some(inner) = t.strip_prefix(m).and_then(|r| r.strip_suffix(m))
            && !inner.is_empty()
            && !inner.starts_with(char::is_whitespace)
            && !inner.contains(m)
        {
            return (inner.trim(), true);
        }
    }
    for label in ["**Q:**", "**Q.**", "__Q:__", "*Q:*", "**Question:**"] {
        if let Some(rest) = t.strip_prefix(label) {
            return (rest.trim(), true);
        }
    }
    (t, false)
}

/// `t` without a leading `Q:`, `Q.` or `Question:` label, and whether it
/// had one.
fn strip_question_label(t: &str) -> (&str, bool) {
    for label in ["Q:", "Q.", "Question:", "QUESTION:", "question:"] {
        if let Some(rest) = t.strip_prefix(label)
            && rest.starts_with(char::is_whitespace)
        {
            return (rest.trim_start(), true);
        }
    }
    (t, false)
}

/// Whether a sentence asks rather than states: it ends with `?` (closing
/// emphasis, quotes or brackets aside), or it is an FAQ entry's question
/// ([`faq_question`]).
fn asks(sentence: &str) -> bool {
    let t = sentence.trim();
    let end = t.trim_end_matches(['*', '_', '"', '\'', ')', ']', '\u{201D}', '\u{2019}']);
    end.ends_with('?') || faq_question(t).is_some()
}

/// Whether a line is wholly in emphasis, at most four words long and
/// without a sentence's end: a label set in bold or italics ("**On this
/// page**", "**Before you start**"), a heading in all but its markup.
fn is_label(t: &str) -> bool {
    let (inner, emphasised) = strip_emphasis(t);
    emphasised
        && !inner.ends_with(['.', '!', '?', ':', ';'])
        && inner.split_whitespace().count() <= 4
}

/// Whether a sentence can state a fact on its own: not a Markdown heading,
/// not a table rule or a code fence, not an admonition's fence, not a
/// label in bold ([`is_label`]), not a question (an FAQ page's questions
/// are its headings), and at least three words. Headings, rules, labels and
/// questions are context, never a claim.
pub fn is_statement(sentence: &str) -> bool {
    let t = sentence.trim();
    if t.starts_with('#')
        || t.starts_with("```")
        || t.starts_with("~~~")
        || is_markup_line(t)
        || is_admonition_fence(t)
        || asks(t)
        || is_label(t)
    {
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

    /// The statements of Markdown `t`, trimmed.
    fn stated(t: &str) -> Vec<&str> {
        statement_spans(t)
            .into_iter()
            .map(|r| t[r].trim())
            .collect()
    }

    /// The block introduced by the sentence of `text` that ends with
    /// `lead` (its text), if any.
    fn introduced<'a>(text: &'a str, lead: &str, markup: Markup) -> Option<&'a str> {
        let end = text.find(lead).expect("lead in text") + lead.len();
        introduced_block(text, end, markup).map(|r| &text[r])
    }

    #[test]
    fn a_sentence_ending_in_a_colon_introduces_the_block_after_it() {
        let md =
            "Use lpstat to list printers:\n\n```sh\nlpstat -p -d\n\nlpstat -a\n```\n\nMore text.";
        assert_eq!(
            introduced(md, "printers:", Markup::Markdown),
            Some("lpstat -p -d\n\nlpstat -a")
        );
        // An unclosed fence (the chunk was cut) keeps what there is.
        assert_eq!(
            introduced("Run:\n~~~\nmake all\n", "Run:", Markup::Markdown),
            Some("make all")
        );
        // Extracted HTML: a <pre> is a paragraph; indentation is trimmed.
        let html = "To print in landscape:\n\n  lp -o landscape filename\n  lpr -o landscape filename\n\nNext paragraph.";
        assert_eq!(
            introduced(html, "landscape:", Markup::Markdown),
            Some("lp -o landscape filename\n  lpr -o landscape filename")
        );
        // A list right under its lead-in, and an AsciiDoc listing block.
        assert_eq!(
            introduced(
                "Options:\n- a is one\n- b is two\n\nEnd.",
                "Options:",
                Markup::Markdown
            ),
            Some("- a is one\n- b is two")
        );
        assert_eq!(
            introduced(
                "Install it:\n\n----\napt install cups\n----\n",
                "it:",
                Markup::AsciiDoc
            ),
            Some("apt install cups")
        );
        // reStructuredText's literal block.
        assert_eq!(
            introduced("Build it::\n\n    make html\n", "it::", Markup::Rst),
            Some("make html")
        );
    }

    #[test]
    fn only_a_colon_at_a_line_end_introduces_a_short_block() {
        // No colon, a colon mid-line, nothing after, a heading or a table.
        assert_eq!(
            introduced("Run this.\n\nmake\n", "this.", Markup::Markdown),
            None
        );
        assert_eq!(
            introduced("Note: it works.\n\nmake\n", "Note:", Markup::Markdown),
            None
        );
        assert_eq!(introduced("Run this:", "this:", Markup::Markdown), None);
        assert_eq!(
            introduced("Run this:\n\n\n", "this:", Markup::Markdown),
            None
        );
        assert_eq!(
            introduced(
                "See below:\n\n## Setup\n\nText.",
                "below:",
                Markup::Markdown
            ),
            None
        );
        assert_eq!(
            introduced(
                "Ports:\n\n| port | use |\n|---|---|\n",
                "Ports:",
                Markup::Markdown
            ),
            None
        );
        // Whole lines up to the cap: a long block is cut at a line end, a
        // first line over the cap introduces nothing.
        let line = "x".repeat(120);
        let long = format!("Run:\n{line}\n{line}\n{line}\n");
        assert_eq!(
            introduced(&long, "Run:", Markup::Markdown).map(str::len),
            Some(241)
        );
        let huge = format!("Run:\n{}\n", "y".repeat(MAX_INTRODUCED + 1));
        assert_eq!(introduced(&huge, "Run:", Markup::Markdown), None);
        // Punctuation alone is not a block.
        assert_eq!(introduced("Run:\n\n...\n", "Run:", Markup::Markdown), None);
        // Any end offset, any bytes: no panic.
        let t = "é:\n日本\n";
        for end in 0..=t.len() + 1 {
            let _ = introduced_block(t, end, Markup::Markdown);
        }
    }

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
    fn abbreviations_do_not_end_sentences() {
        let cases: &[(&str, &[&str])] = &[
            (
                "Use a tool (e.g. `aws s3 sync`), the same one. Next.",
                &["Use a tool (e.g. `aws s3 sync`), the same one. ", "Next."],
            ),
            (
                "That is, i.e. the first. E.g. Debian does it. Done.",
                &[
                    "That is, i.e. the first. ",
                    "E.g. Debian does it. ",
                    "Done.",
                ],
            ),
            (
                "Logs, caches, etc. are kept. Files, etc. Then stop.",
                &[
                    "Logs, caches, etc. are kept. ",
                    "Files, etc. ",
                    "Then stop.",
                ],
            ),
            (
                "See No. 5 and p. 12 of it. The answer is no. Yes it is.",
                &[
                    "See No. 5 and p. 12 of it. ",
                    "The answer is no. ",
                    "Yes it is.",
                ],
            ),
            (
                "Ask Dr. Smith at 9 a.m. on Monday. It is 5 p.m. Then go.",
                &[
                    "Ask Dr. Smith at 9 a.m. on Monday. ",
                    "It is 5 p.m. ",
                    "Then go.",
                ],
            ),
            // A lower-case word after an unknown word still starts a sentence.
            (
                "Run it. npm then installs.",
                &["Run it. ", "npm then installs."],
            ),
            // The timeout is 100 ms.: a unit, not a title.
            (
                "The wait is 100 ms. Then retry.",
                &["The wait is 100 ms. ", "Then retry."],
            ),
            // At the very end, an abbreviation still closes the text.
            ("Bring pens, paper, etc.", &["Bring pens, paper, etc."]),
        ];
        for (t, want) in cases {
            assert_eq!(&sentences(t), want, "{t:?}");
        }
    }

    #[test]
    fn a_wrapped_paragraph_is_one_run_of_sentences() {
        let t = "Refunds are available within\n30 days of purchase. Contact\nsupport to start one.\n\nNext paragraph.";
        assert_eq!(
            sentences(t),
            vec![
                "Refunds are available within\n30 days of purchase. ",
                "Contact\nsupport to start one.\n\n",
                "Next paragraph."
            ]
        );
        // Windows line ends wrap the same way.
        assert_eq!(
            sentences("Refunds take\r\nfive days.\r\nYes"),
            vec!["Refunds take\r\nfive days.\r\n", "Yes"]
        );
    }

    #[test]
    fn lines_that_stand_alone_still_end_at_the_line_break() {
        let cases: &[(&str, &[&str])] = &[
            ("# Title\nBody text", &["# Title\n", "Body text"]),
            ("Intro text\n## Sub", &["Intro text\n", "## Sub"]),
            (
                "- an item that\n  wraps on\n- another\n1. first\n2) second",
                &[
                    "- an item that\n  wraps on\n",
                    "- another\n",
                    "1. first\n",
                    "2) second",
                ],
            ),
            (
                "| a | b |\n|---|---|\n| c | d |",
                &["| a | b |\n", "|---|---|\n", "| c | d |"],
            ),
            (
                "Setext title\n=====\nBody",
                &["Setext title\n", "=====\n", "Body"],
            ),
            ("Hard break  \nnext line", &["Hard break  \n", "next line"]),
            ("Backslash\\\nnext", &["Backslash\\\n", "next"]),
            ("> quoted\n> more", &["> quoted\n", "> more"]),
            (
                "Run this\n```\nls -l\ncd /tmp\n```\nthen stop",
                &[
                    "Run this\n",
                    "```\n",
                    "ls -l\n",
                    "cd /tmp\n",
                    "```\n",
                    "then stop",
                ],
            ),
            (
                "Items:\n* one\n+ two\n\u{2022} three",
                &["Items:\n", "* one\n", "+ two\n", "\u{2022} three"],
            ),
            (
                "Done.\n1. first\n2. second",
                &["Done.\n", "1. first\n", "2. second"],
            ),
        ];
        for (t, want) in cases {
            assert_eq!(&sentences(t), want, "{t:?}");
        }
    }

    #[test]
    fn long_unpunctuated_line_runs_are_cut_back_at_line_breaks() {
        let line = "A line of a list written without any markers at all";
        let t = [line; 8].join("\n");
        let s = sentences(&t);
        assert_eq!(s.len(), 8, "{s:?}");
        assert_eq!(s.concat(), t);
        // A short run stays joined.
        assert_eq!(sentences(&[line; 2].join("\n")).len(), 1);
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
    fn setext_heading_text_is_not_a_statement() {
        let t = "DNS SRV record support in apt\n=============================\n\nApt supports a subset of the records.\nThe next line is a rule\n\n---\n";
        let got = stated(t);
        assert_eq!(
            got,
            [
                "Apt supports a subset of the records.",
                "The next line is a rule"
            ]
        );
        assert!(statement_spans("Three words here\n   ----  \n").is_empty());
        assert_eq!(statement_spans("Three words here\n    ----\n").len(), 1);
        assert_eq!(statement_spans("Three words here\n-\n").len(), 1);
    }

    #[test]
    fn statements_are_not_headings_or_rules() {
        assert!(is_statement("Refunds take 5 business days. "));
        assert!(!is_statement("## Refunds\n"));
        assert!(!is_statement("|---|---|\n"));
        assert!(!is_statement("Yes.\n"));
        assert!(!is_statement("```sql\n"));
        assert!(is_statement("- Cards are replaced for free.\n"));
        assert!(!is_statement("<TabItem value=\"apt\" label=\"APT\">\n"));
        assert!(is_statement("<b>Note</b> cards are free.\n"));
        // Questions ask; they never state what the answer is.
        assert!(!is_statement("Why was I charged twice?\n"));
        assert!(!is_statement("**Q: Does sync use mobile data?**\n"));
        assert!(!is_statement("**Q: My notes are gone from my phone.**\n"));
        assert!(!is_statement(":::danger Forgotten passphrases\n"));
        assert!(!is_statement("!!! note \"Before you start\"\n"));
        assert!(is_statement(
            "Refunds are issued within 14 days of payment.\n"
        ));
        // A label in bold is a heading in all but markup; a statement in
        // bold is still one.
        assert!(!is_statement("**On this page**\n"));
        assert!(!is_statement("_Before you start here_"));
        assert!(is_statement("**Refunds take 14 days.**"));
        assert!(is_statement(
            "**Refunds are never available for annual plans**"
        ));
    }

    #[test]
    fn a_table_row_is_one_sentence() {
        let t = "| Code | What to do |\n|---|---|\n| QP-401 | Sign in again. Sessions end after 30 days. |\n| QP-429 | Wait 60 seconds. |\n\nThen try again later. Done.";
        let got = stated(t);
        assert_eq!(
            got,
            [
                // The header row names columns; it states nothing.
                "| QP-401 | Sign in again. Sessions end after 30 days. |",
                "| QP-429 | Wait 60 seconds. |",
                "Then try again later.",
            ]
        );
    }

    #[test]
    fn faq_questions_are_bold_or_labelled() {
        assert_eq!(
            faq_question("**Q: Does Quillpad use my mobile data?**"),
            Some("Does Quillpad use my mobile data?")
        );
        assert_eq!(
            faq_question("**How do I cancel my plan?**"),
            Some("How do I cancel my plan?")
        );
        assert_eq!(
            faq_question("**Q:** Where are my invoices?"),
            Some("Where are my invoices?")
        );
        assert_eq!(
            faq_question("Q: My notes are gone."),
            Some("My notes are gone.")
        );
        assert_eq!(
            faq_question("_Question: Can I pay yearly?_"),
            Some("Can I pay yearly?")
        );
        // Running text, labels that are not questions, list items.
        assert_eq!(faq_question("Forgot your password? Reset it."), None);
        assert_eq!(faq_question("How do I cancel?"), None);
        assert_eq!(faq_question("**Important**"), None);
        assert_eq!(faq_question("- **Can I pay yearly?**"), None);
        assert_eq!(faq_question("**Q** is a letter"), None);
        assert_eq!(faq_question("Qatar: shipping takes 5 days."), None);
        assert_eq!(faq_question("**bold** and **bold?**"), None);
    }

    #[test]
    fn admonition_fences_stand_alone() {
        for t in [
            ":::",
            "::::",
            ":::tip",
            "::: warning Careful",
            ":::note{title=\"x\"}",
            "!!! note \"Title\"",
            "??? info",
            "???+ tip",
        ] {
            assert!(is_admonition_fence(t), "{t}");
        }
        for t in [":::: 3", "!!!", "!!! ", "!!!Wow", "Note: ::: here", "???"] {
            assert!(!is_admonition_fence(t), "{t}");
        }
        let t = ":::danger Forgotten passphrases\nWe never see your passphrase and can't reset it.\n:::\n";
        let got = stated(t);
        assert_eq!(got, ["We never see your passphrase and can't reset it."]);
        let t = "!!! tip\n    Keep your recovery codes offline\n:::\n";
        let got = stated(t);
        assert_eq!(got, ["Keep your recovery codes offline"]);
    }

    #[test]
    fn restructuredtext_lines_stand_alone() {
        let t = "On Debian\n~~~~~~~~~\n\nInstall the package\nwith apt.\n\n.. note::\n   Keep your key\n   safe.\n\n:param name: the user's name\n:returns: a greeting\n\n:ref:`install` explains the\nrest of it.\n";
        let got: Vec<&str> = statement_spans_in(t, Markup::Rst)
            .into_iter()
            .map(|r| t[r].trim())
            .collect();
        assert_eq!(
            got,
            [
                "Install the package\nwith apt.",
                "Keep your key\n   safe.",
                ":param name: the user's name",
                ":returns: a greeting",
                ":ref:`install` explains the\nrest of it."
            ]
        );
        // Read as Markdown, `~~~~~~~~~` opens a code fence: nothing after it
        // joins across a line break.
        let md: Vec<&str> = statement_spans(t)
            .into_iter()
            .map(|r| t[r].trim())
            .collect();
        assert!(md.contains(&"Install the package"), "{md:?}");
        assert!(
            is_adornment("^^^^")
                && is_adornment("\"\"")
                && !is_adornment("=")
                && !is_adornment("=-=")
        );
    }

    #[test]
    fn asciidoc_markup_stands_alone_and_states_nothing() {
        let doc = "= User Guide\nJane Doe <jane@example.com>\nv2.1, 2026-01-01 release\n:toc: left\n\n== Installing the agent\n\n[NOTE]\n.Before you start\nThe agent needs a\nrunning server. Check it first.\n\n[source,bash]\n----\nsudo apt install agent now\n----\n\n////\nA comment block that nobody reads here.\n////\n\n// a comment line with four words\nimage::diagram.png[The agent and server]\n\n. Open the settings page\n. Choose the agent tab +\nthen save it\n\n|===\n| Port | 8080 and more\n|===\n";
        let spans = statement_spans_in(doc, Markup::AsciiDoc);
        let got: Vec<&str> = spans.iter().map(|r| doc[r.clone()].trim()).collect();
        assert_eq!(
            got,
            [
                "The agent needs a\nrunning server.",
                "Check it first.",
                "sudo apt install agent now",
                "Open the settings page",
                "Choose the agent tab +",
                "then save it",
                "| Port | 8080 and more",
            ]
        );
        // Under the Markdown rule the same file's markup would be text.
        assert!(
            statement_spans_in(doc, Markup::Markdown)
                .iter()
                .any(|r| doc[r.clone()].contains("A comment block"))
        );
        assert_eq!(asciidoc_title("== Setup"), Some((2, "Setup")));
        assert_eq!(asciidoc_title("==Setup"), None);
        assert_eq!(asciidoc_title("======= Seven"), None);
        for t in [
            "include::a.adoc[]",
            "ifdef::env-github[]",
            "toc::[]",
            "--",
            "****",
            "[[install]]",
            "+",
        ] {
            assert!(is_asciidoc_markup(t), "{t}");
        }
        for t in [
            "CPU:: the processor",
            "Run it.",
            ". item",
            ".. item",
            "-- Author",
        ] {
            assert!(!is_asciidoc_markup(t), "{t}");
        }
    }

    #[test]
    fn markup_lines_stand_alone() {
        assert!(is_markup_line("<Tabs>"));
        assert!(is_markup_line(
            "  </TabItem> <TabItem value=\"apt\" label=\"APT\">"
        ));
        assert!(is_markup_line("<br/>"));
        assert!(!is_markup_line("<b>Note</b> text"));
        assert!(!is_markup_line("a < b > c"));
        assert!(!is_markup_line("<3 this"));
        assert!(!is_markup_line(""));
        let t = "<TabItem value=\"apt\">\nRun the installer.\n</TabItem>\n";
        let got = stated(t);
        assert_eq!(got, ["Run the installer."]);
    }

    /// The header [`table_header`] finds for the line of `text` holding
    /// `needle`.
    fn header_of<'a>(text: &'a str, needle: &str) -> Option<&'a str> {
        let at = text.find(needle).expect("needle in text");
        table_header(text, at).map(|r| &text[r])
    }

    #[test]
    fn a_table_row_has_the_header_row_above_its_delimiter() {
        let md = "Errors:\n\n| Code | Meaning |\n|---|:--:|\n| RM-4221 | Revoked key. |\n\
                  | RM-4223 | Missing variable. |\n\nAfter the table.";
        assert_eq!(header_of(md, "| RM-4221"), Some("| Code | Meaning |"));
        // Any byte of a later row, a cell's text included.
        assert_eq!(
            header_of(md, "Missing variable"),
            Some("| Code | Meaning |")
        );
        // The header row, the delimiter row and text around the table have none.
        assert_eq!(header_of(md, "| Code"), None);
        assert_eq!(header_of(md, "|---"), None);
        assert_eq!(header_of(md, "Errors:"), None);
        assert_eq!(header_of(md, "After the table."), None);
        // Without outer pipes, with CRLF line ends and indentation.
        let bare = "  Code | Meaning\r\n--- | ---\r\nRM-1 | é ok\r\n";
        assert_eq!(header_of(bare, "RM-1"), Some("Code | Meaning"));
    }

    #[test]
    fn a_row_without_its_header_in_the_text_has_none() {
        // A chunk that starts inside a table, and a table cut by a blank line.
        assert_eq!(header_of("| RM-1 | a |\n| RM-2 | b |", "| RM-2"), None);
        assert_eq!(
            header_of("| A | B |\n|---|---|\n| 1 | 2 |\n\n| 3 | 4 |", "| 3"),
            None
        );
        // A delimiter row on the first line has no header above it.
        assert_eq!(header_of("|---|---|\n| 1 | 2 |", "| 1"), None);
        // Out of range and inside a character: no panic, no header.
        let md = "| A | B |\n|---|---|\n| é | 2 |";
        assert_eq!(table_header(md, md.len() + 10), Some(0..9));
        let inside = md.find('é').unwrap() + 1;
        assert_eq!(table_header(md, inside), None);
        // Too far below its header: none, so the walk is bounded.
        let mut long = String::from("| A |\n|---|\n");
        for i in 0..=MAX_TABLE_ROWS {
            long.push_str(&format!("| {i} |\n"));
        }
        long.push_str("| last |");
        assert_eq!(header_of(&long, "| last"), None);
        assert_eq!(header_of(&long, "| 3 |"), Some("| A |"));
    }

    #[test]
    fn a_table_header_row_and_an_html_comment_state_nothing() {
        let md = "| Event | Sent when |\n|---|:--|\n| `message.bounced` | The receiving server rejected it. |\n";
        assert_eq!(
            stated(md),
            ["| `message.bounced` | The receiving server rejected it. |"]
        );
        // A row followed by another row is data, not a header.
        assert_eq!(
            stated("| Plan | Price per month |\n| Growth | US$ 80 |"),
            ["| Plan | Price per month |", "| Growth | US$ 80 |"]
        );
        let md = "Keys last a year. <!-- TODO: document RM-4094 once it ships -->\n\n<!--\nInternal: check with legal before\npublishing this page.\n-->\nRotate them yearly.\n\n<!-- an unclosed note\nStill shown here.";
        assert_eq!(
            stated(md),
            [
                "Keys last a year.",
                "Rotate them yearly.",
                "Still shown here."
            ]
        );
        assert!(is_table_delimiter("|---|:--:|"));
        assert!(is_table_delimiter(" --- | --- "));
        assert!(!is_table_delimiter("---"));
        assert!(!is_table_delimiter("| a | b |"));
    }
}
