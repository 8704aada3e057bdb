//! Heading- and paragraph-aware chunking whose chunks are exact substrings of
//! the source.

use std::ops::Range;

use serde::{Deserialize, Serialize};

use groundcite_core::sentences::Markup;

use crate::formats::{Extracted, TextBlock};
use crate::markdown::{self, Fence};

/// How documents are cut into chunks.
///
/// Sizes count Unicode scalar values (`char`s), not bytes. `max_chars` below 1
/// is treated as 1; `overlap_chars` is clamped to a quarter of `max_chars` so
/// that every split makes real progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChunkerConfig {
    /// Upper bound on a chunk's length, in `char`s (default 1200). Every
    /// chunk respects it.
    pub max_chars: usize,
    /// How much consecutive pieces of one split paragraph share, in `char`s
    /// (default 150). The shared text starts at a word boundary.
    pub overlap_chars: usize,
}

impl Default for ChunkerConfig {
    fn default() -> Self {
        ChunkerConfig {
            max_chars: 1200,
            overlap_chars: 150,
        }
    }
}

impl ChunkerConfig {
    fn effective(&self) -> (usize, usize) {
        let max = self.max_chars.max(1);
        (max, self.overlap_chars.min(max / 4))
    }
}

/// One chunk of a document, as produced by [`chunk_document`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocChunk {
    /// `"<relative/path>#chunk-<N>"`, `N` counting from **1** in document
    /// order. Same path and same text give the same IDs.
    pub chunk_id: String,
    /// The chunk's text: exactly `text[byte_range]` of the source, so a
    /// verbatim quote of the chunk is a verbatim quote of the file.
    pub content: String,
    /// Byte offsets of `content` in the text given to [`chunk_document`].
    pub byte_range: Range<usize>,
    /// Texts of the Markdown headings in force where the chunk's body starts,
    /// outermost first (`["Refund policy", "Refund window"]`). Empty for text
    /// before the first heading and for `.txt` files.
    pub heading_path: Vec<String>,
    /// The PDF page the chunk is on (1-based); `None` for formats without
    /// pages. A chunk never spans two pages.
    pub page_number: Option<u32>,
}

/// Builds the ID of the `ordinal`-th chunk (from 1) of `rel_path`.
pub fn chunk_id(rel_path: &str, ordinal: usize) -> String {
    format!("{rel_path}#chunk-{ordinal}")
}

/// A block of the source: one heading (an ATX line, or a setext heading's
/// text and underline), one paragraph (lines up to a blank line), or one
/// fenced code block.
#[derive(Debug)]
pub(crate) struct Block<'a> {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) heading: Option<(usize, &'a str)>,
}

/// How a file's lines are read: plain text (paragraphs only), Markdown, or
/// MDX (Markdown whose `import`/`export` lines and tag-only lines are
/// markup, not text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    Text,
    Markdown,
    Mdx,
    /// reStructuredText (`.rst`, `.rest`): [`crate::rst`].
    Rst,
    /// AsciiDoc (`.adoc`, `.asciidoc`): [`crate::asciidoc`].
    AsciiDoc,
}

impl Flavor {
    pub(crate) fn of(rel_path: &str) -> Flavor {
        match rel_path
            .rsplit_once('.')
            .map(|(_, e)| e.to_ascii_lowercase())
        {
            Some(e) if e == "txt" => Flavor::Text,
            Some(e) if e == "mdx" => Flavor::Mdx,
            Some(e) if e == "rst" || e == "rest" => Flavor::Rst,
            Some(e) if e == "adoc" || e == "asciidoc" => Flavor::AsciiDoc,
            _ => Flavor::Markdown,
        }
    }

    /// How the sentence rule reads this flavor's lines.
    pub(crate) fn markup(self) -> Markup {
        match self {
            Flavor::Rst => Markup::Rst,
            Flavor::AsciiDoc => Markup::AsciiDoc,
            Flavor::Text | Flavor::Markdown | Flavor::Mdx => Markup::Markdown,
        }
    }
}

/// How the sentence rule reads the lines of a chunk, from its ID's file
/// extension: reStructuredText for `.rst` and `.rest` files, AsciiDoc for
/// `.adoc` and `.asciidoc`, else Markdown.
pub fn chunk_markup(chunk_id: &str) -> Markup {
    let path = chunk_id.rsplit_once('#').map_or(chunk_id, |(p, _)| p);
    Flavor::of(path).markup()
}

/// Where the text of a document starts: after a byte-order mark, and for
/// Markdown after its front matter ([`markdown::front_matter`]).
pub(crate) fn body_start(text: &str, flavor: Flavor) -> usize {
    let from = if text.starts_with('\u{feff}') { 3 } else { 0 };
    if matches!(flavor, Flavor::Text | Flavor::Rst | Flavor::AsciiDoc) {
        return from;
    }
    markdown::front_matter(text, from).map_or(from, |f| f.body)
}

pub(crate) fn blocks(text: &str, flavor: Flavor) -> Vec<Block<'_>> {
    if flavor == Flavor::Rst {
        return crate::rst::blocks(text, body_start(text, flavor));
    }
    if flavor == Flavor::AsciiDoc {
        return crate::asciidoc::blocks(text, body_start(text, flavor));
    }
    let markdown = flavor != Flavor::Text;
    let mut out = Vec::new();
    let mut current: Option<(usize, usize)> = None;
    let mut fence: Option<Fence> = None;
    let flush = |current: &mut Option<(usize, usize)>, out: &mut Vec<Block<'_>>| {
        if let Some((start, end)) = current.take() {
            out.push(Block {
                start,
                end,
                heading: None,
            });
        }
    };
    for line in markdown::lines(text, body_start(text, flavor)) {
        let s = &text[line.start..line.end];
        if let Some(open) = fence {
            // Inside a fence: blank lines and `#` lines belong to the code.
            current = Some((current.map_or(line.start, |(start, _)| start), line.end));
            if markdown::fence_closes(s, open) {
                fence = None;
                flush(&mut current, &mut out);
            }
            continue;
        }
        if markdown::is_blank(s) {
            flush(&mut current, &mut out);
            continue;
        }
        if markdown {
            if let Some(heading) = markdown::atx_heading(s) {
                flush(&mut current, &mut out);
                out.push(Block {
                    start: line.start,
                    end: line.end,
                    heading: Some(heading),
                });
                continue;
            }
            if let Some(open) = markdown::fence_open(s) {
                flush(&mut current, &mut out);
                current = Some((line.start, line.end));
                fence = Some(open);
                continue;
            }
            // The paragraph above an underline is a heading (CommonMark's
            // setext headings): "Refunds\n=======".
            if let Some(level) = markdown::setext_underline(s)
                && let Some((start, end)) = current
                && markdown::may_be_setext(&text[start..end])
            {
                current = None;
                out.push(Block {
                    start,
                    end: line.end,
                    heading: Some((level, text[start..end].trim())),
                });
                continue;
            }
            if markdown::thematic_break(s)
                || groundcite_core::sentences::is_admonition_fence(s)
                || (flavor == Flavor::Mdx
                    && (markdown::mdx_esm(s) || groundcite_core::sentences::is_markup_line(s)))
            {
                flush(&mut current, &mut out);
                continue;
            }
            // An FAQ entry's question (`**Q: How do I …?**`) opening a
            // paragraph titles the answer below it, as a heading would.
            if current.is_none()
                && let Some(question) = groundcite_core::sentences::faq_question(s)
            {
                out.push(Block {
                    start: line.start,
                    end: line.end,
                    heading: Some((FAQ_LEVEL, question)),
                });
                continue;
            }
        }
        current = Some((current.map_or(line.start, |(start, _)| start), line.end));
    }
    flush(&mut current, &mut out);
    if markdown {
        plain_questions_as_titles(text, &mut out);
    }
    out
}

/// The level of an FAQ entry's question as a heading: below every
/// Markdown heading (1 to 6), so the next question replaces it and the
/// next real heading ends it.
const FAQ_LEVEL: usize = 7;

/// A paragraph of one plain line that asks a question (`How do I cancel?`)
/// followed by a paragraph is an FAQ entry's question too: the title of
/// the answer below it. Not a question inside running text, a list item,
/// a table row or a quote, and not one of several sentences.
fn plain_questions_as_titles<'a>(text: &'a str, blocks: &mut [Block<'a>]) {
    for i in 0..blocks.len().saturating_sub(1) {
        if blocks[i].heading.is_some() || blocks[i + 1].heading.is_some() {
            continue;
        }
        let t = text[blocks[i].start..blocks[i].end].trim();
        let one_sentence = !t.contains('\n')
            && t.len() <= 200
            && t.ends_with('?')
            && !t[..t.len() - 1].contains(['?', '!'])
            && !t.contains(". ");
        let plain = !t.starts_with(['#', '|', '>', '-', '+', '*', '<', '`', '[', '!'])
            && !t.starts_with(|c: char| c.is_ascii_digit())
            && t.split_whitespace().count() >= 3;
        if one_sentence && plain {
            blocks[i].heading = Some((FAQ_LEVEL, t));
        }
    }
}

/// Byte position after `n` chars from `from`, or `end` if the text runs out.
fn advance_chars(text: &str, from: usize, end: usize, n: usize) -> usize {
    text[from..end]
        .char_indices()
        .nth(n)
        .map_or(end, |(i, _)| from + i)
}

fn char_len(text: &str, range: Range<usize>) -> usize {
    text[range].chars().count()
}

fn skip_whitespace(text: &str, from: usize, end: usize) -> usize {
    text[from..end]
        .char_indices()
        .find(|(_, c)| !c.is_whitespace())
        .map_or(end, |(i, _)| from + i)
}

fn trim_range(text: &str, range: Range<usize>) -> Range<usize> {
    let slice = &text[range.clone()];
    let start = range.start + (slice.len() - slice.trim_start().len());
    let end = range.start + slice.trim_end().len();
    start..end.max(start)
}

/// Where to end a piece that starts at `start` and may run to `limit` (which
/// is `max` chars away): the last sentence end in the second half of the
/// window, else the last word end there, else `limit` itself (a char
/// boundary). Always `> start`.
fn find_cut(text: &str, start: usize, limit: usize, max: usize) -> usize {
    let lower = (max / 2).max(1);
    let mut sentence = None;
    let mut word = None;
    let mut prev: Option<char> = None;
    let mut prev2: Option<char> = None;
    let window_end = advance_chars(text, limit, text.len(), 1);
    for (count, (off, ch)) in text[start..window_end].char_indices().enumerate() {
        let pos = start + off;
        if count >= lower
            && let Some(p) = prev
        {
            let closes_sentence = |c: char| matches!(c, '.' | '!' | '?');
            let after_close =
                matches!(p, '"' | '\'' | ')' | ']') && prev2.is_some_and(closes_sentence);
            if (ch.is_whitespace() && (closes_sentence(p) || after_close))
                || matches!(p, '\u{3002}' | '\u{ff01}' | '\u{ff1f}')
            {
                sentence = Some(pos);
            }
            if ch.is_whitespace() && !p.is_whitespace() {
                word = Some(pos);
            }
        }
        prev2 = prev;
        prev = Some(ch);
    }
    sentence.or(word).unwrap_or(limit)
}

/// Splits `range` (longer than `max` chars) into pieces of at most `max`
/// chars, consecutive pieces sharing about `overlap` chars.
fn split_long(text: &str, range: Range<usize>, max: usize, overlap: usize) -> Vec<Range<usize>> {
    let end = range.end;
    let mut out = Vec::new();
    let mut start = skip_whitespace(text, range.start, end);
    while start < end {
        let limit = advance_chars(text, start, end, max);
        if limit >= end {
            out.push(start..end);
            break;
        }
        let cut = find_cut(text, start, limit, max);
        out.push(start..cut);
        let mut next = cut;
        if overlap > 0 {
            // Back up `overlap` chars, then forward to the next word start.
            let back = text[start..cut]
                .char_indices()
                .rev()
                .nth(overlap - 1)
                .map_or(start, |(i, _)| start + i);
            let mut prev_ws = back == start
                || text[..back]
                    .chars()
                    .next_back()
                    .is_some_and(char::is_whitespace);
            for (off, ch) in text[back..cut].char_indices() {
                if !ch.is_whitespace() && prev_ws {
                    let candidate = back + off;
                    if candidate > start {
                        next = candidate;
                        break;
                    }
                }
                prev_ws = ch.is_whitespace();
            }
        }
        start = skip_whitespace(text, next, end);
    }
    out
}

/// The chunk being packed.
struct Pending {
    start: usize,
    end: usize,
    has_body: bool,
    heading_path: Option<Vec<String>>,
}

/// Cuts one document into chunks.
///
/// * A Markdown heading starts a new chunk, which keeps the heading line as
///   its first line; headings with nothing between them share a chunk.
/// * Paragraphs (separated by blank lines; a fenced code block counts as one)
///   are packed into a chunk while it stays within `cfg.max_chars`.
/// * A paragraph longer than that is split at sentence ends, else at white
///   space, else at a character boundary; consecutive pieces overlap by about
///   `cfg.overlap_chars`, starting at a word boundary.
/// * Every chunk's `content` is `text[byte_range]`, trimmed of white space,
///   never empty, and at most `max_chars` chars long.
/// * Files whose name ends with `.txt` are chunked by paragraphs only.
/// * A leading byte-order mark is ignored.
///
/// `rel_path` should use forward slashes; it only names the chunks (and picks
/// plain text vs Markdown). The function is pure: same input, same output.
pub fn chunk_document(rel_path: &str, text: &str, cfg: &ChunkerConfig) -> Vec<DocChunk> {
    let mut packer = Packer::new(cfg);
    packer.pack(text, &blocks(text, Flavor::of(rel_path)));
    packer.finish(rel_path, text, &[])
}

/// Cuts an extracted document ([`crate::extract`]) into chunks: Markdown and
/// text as [`chunk_document`] does; other formats by their own blocks
/// (paragraphs, and headings that start sections as Markdown headings do),
/// each PDF page separately, so that every PDF chunk lies on one page and
/// carries its `page_number`.
pub fn chunk_extracted(rel_path: &str, doc: &Extracted, cfg: &ChunkerConfig) -> Vec<DocChunk> {
    let text = doc.text.as_str();
    let Some(own) = &doc.blocks else {
        return chunk_document(rel_path, text, cfg);
    };
    let as_block = |b: &TextBlock| Block {
        start: b.range.start,
        end: b.range.end,
        heading: b
            .heading
            .map(|level| (usize::from(level), text[b.range.clone()].trim())),
    };
    let mut packer = Packer::new(cfg);
    if doc.pages.is_empty() {
        let blocks: Vec<Block<'_>> = own.iter().map(as_block).collect();
        packer.pack(text, &blocks);
        return packer.finish(rel_path, text, &[]);
    }
    let mut pages = Vec::with_capacity(doc.pages.len());
    for page in &doc.pages {
        let blocks: Vec<Block<'_>> = own
            .iter()
            .filter(|b| page.range.contains(&b.range.start))
            .map(as_block)
            .collect();
        packer.pack(text, &blocks);
        packer.close();
        pages.push((packer.ranges.len(), page.number));
    }
    packer.finish(rel_path, text, &pages)
}

/// Packs blocks into chunk ranges.
struct Packer {
    max: usize,
    overlap: usize,
    stack: Vec<(usize, String)>,
    ranges: Vec<(Range<usize>, Vec<String>)>,
    pending: Option<Pending>,
}

fn path_of(stack: &[(usize, String)]) -> Vec<String> {
    stack.iter().map(|(_, t)| t.clone()).collect()
}

impl Packer {
    fn new(cfg: &ChunkerConfig) -> Packer {
        let (max, overlap) = cfg.effective();
        Packer {
            max,
            overlap,
            stack: Vec::new(),
            ranges: Vec::new(),
            pending: None,
        }
    }

    /// Emits the pending chunk, if any.
    fn close(&mut self) {
        if let Some(p) = self.pending.take() {
            let path = p.heading_path.unwrap_or_else(|| path_of(&self.stack));
            self.ranges.push((p.start..p.end, path));
        }
    }

    fn pack(&mut self, text: &str, blocks: &[Block<'_>]) {
        let (max, overlap) = (self.max, self.overlap);
        for block in blocks {
            if let Some((level, title)) = block.heading {
                if self.pending.as_ref().is_some_and(|p| p.has_body) {
                    self.close();
                }
                while self.stack.last().is_some_and(|(l, _)| *l >= level) {
                    self.stack.pop();
                }
                if !title.is_empty() {
                    self.stack.push((level, markdown::one_line(title)));
                }
            }
            let is_body = block.heading.is_none();
            let body_path = is_body.then(|| path_of(&self.stack));
            // Try to pack the block into the pending chunk.
            if let Some(p) = self.pending.as_mut()
                && char_len(text, p.start..block.end) <= max
            {
                p.end = block.end;
                if is_body && !p.has_body {
                    p.has_body = true;
                    p.heading_path = body_path;
                }
                continue;
            }
            // It does not fit. Headings alone make a poor chunk: keep them as
            // the start of the split; otherwise close the pending chunk first.
            let split_from = match self.pending.as_ref() {
                Some(p) if !p.has_body => {
                    let start = p.start;
                    self.pending = None;
                    start
                }
                Some(_) => {
                    self.close();
                    block.start
                }
                None => block.start,
            };
            if char_len(text, split_from..block.end) <= max {
                self.pending = Some(Pending {
                    start: split_from,
                    end: block.end,
                    has_body: is_body,
                    heading_path: body_path,
                });
            } else {
                let path = path_of(&self.stack);
                for piece in split_long(text, split_from..block.end, max, overlap) {
                    self.ranges.push((piece, path.clone()));
                }
            }
        }
    }

    /// The chunks, numbered from 1. `pages` lists `(ranges emitted so far,
    /// page number)` after each page, in order; empty without pages.
    fn finish(mut self, rel_path: &str, text: &str, pages: &[(usize, u32)]) -> Vec<DocChunk> {
        self.close();
        let page_of = |i: usize| {
            pages
                .iter()
                .find(|(upto, _)| i < *upto)
                .map(|(_, number)| *number)
        };
        self.ranges
            .into_iter()
            .enumerate()
            .map(|(i, (range, path))| (trim_range(text, range), path, page_of(i)))
            .filter(|(range, _, _)| !range.is_empty())
            .enumerate()
            .map(|(i, (range, heading_path, page_number))| DocChunk {
                chunk_id: chunk_id(rel_path, i + 1),
                content: text[range.clone()].to_owned(),
                byte_range: range,
                heading_path,
                page_number,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contents(chunks: &[DocChunk]) -> Vec<&str> {
        chunks.iter().map(|c| c.content.as_str()).collect()
    }

    #[test]
    fn headings_start_chunks_and_keep_their_line() {
        let text = "# Title\n\nIntro.\n\n## A\n\nAlpha.\n\n## B\n\nBeta.\n";
        let chunks = chunk_document("doc.md", text, &ChunkerConfig::default());
        assert_eq!(
            contents(&chunks),
            ["# Title\n\nIntro.", "## A\n\nAlpha.", "## B\n\nBeta."]
        );
        assert_eq!(chunks[0].chunk_id, "doc.md#chunk-1");
        assert_eq!(chunks[2].heading_path, ["Title", "B"]);
        assert_eq!(chunks[0].heading_path, ["Title"]);
    }

    #[test]
    fn adjacent_headings_share_a_chunk() {
        let text = "# Title\n## Sub\nBody.";
        let chunks = chunk_document("a.md", text, &ChunkerConfig::default());
        assert_eq!(contents(&chunks), [text]);
        assert_eq!(chunks[0].heading_path, ["Title", "Sub"]);
    }

    #[test]
    fn faq_questions_title_their_answers() {
        let text = "# Sync FAQ\n\n**Q: Does sync use mobile data?**\n\nYes, by default.\n\n\
                    **Q: Can I pick notebooks?**\nYes, with selective sync.\n\n\
                    How much data does sync use?\n\nVery little after the first sync.\n\n\
                    ## Other\n\nDone.";
        let chunks = chunk_document("faq.md", text, &ChunkerConfig::default());
        let paths: Vec<Vec<String>> = chunks.iter().map(|c| c.heading_path.clone()).collect();
        assert_eq!(
            paths,
            [
                vec!["Sync FAQ", "Does sync use mobile data?"],
                vec!["Sync FAQ", "Can I pick notebooks?"],
                vec!["Sync FAQ", "How much data does sync use?"],
                vec!["Sync FAQ", "Other"],
            ]
        );
        assert_eq!(
            contents(&chunks)[1],
            "**Q: Can I pick notebooks?**\nYes, with selective sync."
        );
        // A question inside running text, or one closing a page, titles nothing.
        let text = "# T\n\nForgot it? Reset it.\n\nWhat next?";
        let chunks = chunk_document("a.md", text, &ChunkerConfig::default());
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].heading_path, ["T"]);
        // Plain text files have no titles.
        let text = "How much is it?\n\nFive euros.";
        let chunks = chunk_document("a.txt", text, &ChunkerConfig::default());
        assert!(chunks[0].heading_path.is_empty());
    }

    #[test]
    fn admonition_fences_separate_blocks() {
        let text =
            "# T\n\nText before\n:::tip Keep codes safe\nStore them offline\n:::\nText after";
        let blocks = blocks(text, Flavor::Markdown);
        let texts: Vec<&str> = blocks.iter().map(|b| &text[b.start..b.end]).collect();
        assert_eq!(
            texts,
            ["# T", "Text before", "Store them offline", "Text after"]
        );
    }

    #[test]
    fn fenced_hash_is_not_a_heading() {
        let text = "# T\n\n```sh\n# comment\n\necho hi\n```\n\nAfter.";
        let chunks = chunk_document("a.md", text, &ChunkerConfig::default());
        assert_eq!(contents(&chunks), [text]);
    }

    #[test]
    fn txt_has_no_headings() {
        let text = "# not a heading\n\nbody";
        let chunks = chunk_document("notes.TXT", text, &ChunkerConfig::default());
        assert_eq!(contents(&chunks), [text]);
        assert!(chunks[0].heading_path.is_empty());
    }

    #[test]
    fn bom_and_blank_documents() {
        assert!(chunk_document("a.md", "", &ChunkerConfig::default()).is_empty());
        assert!(chunk_document("a.md", " \n\t\n", &ChunkerConfig::default()).is_empty());
        let chunks = chunk_document("a.md", "\u{feff}# T\nx", &ChunkerConfig::default());
        assert_eq!(contents(&chunks), ["# T\nx"]);
        assert_eq!(chunks[0].heading_path, ["T"]);
    }

    #[test]
    fn cut_prefers_sentence_then_word_then_char() {
        let text = "Aaaa bbbb. Cccc dddd eeee";
        let max = 16;
        let limit = advance_chars(text, 0, text.len(), max);
        assert_eq!(&text[..find_cut(text, 0, limit, max)], "Aaaa bbbb.");
        let text = "aaaa bbbb cccc dddd";
        let limit = advance_chars(text, 0, text.len(), max);
        assert_eq!(&text[..find_cut(text, 0, limit, max)], "aaaa bbbb cccc");
        let text = "abcdefghijklmnopqrstuvwxyz";
        let limit = advance_chars(text, 0, text.len(), max);
        assert_eq!(find_cut(text, 0, limit, max), 16);
    }
}
