//! Turning a file's bytes into text the chunker can cut: Markdown and plain
//! text as they are; PDF (text layer), HTML, DOCX, ODT and EPUB through an
//! extractor.
//!
//! An extractor returns the text it built plus its structure (paragraphs and
//! headings, and for PDF the pages and each character's glyph box), so that
//! chunks stay exact substrings of the extracted text and a quote found in a
//! chunk can be traced back to the page. Every extractor takes any bytes: a
//! file it cannot read is an [`ExtractError`] naming why, never a panic.

mod cmap;
mod docx;
mod epub;
mod html;
mod odt;
mod package;
mod pdf;

use std::ops::Range;

pub(crate) use crate::layout::DocLayout;

/// A document format, chosen by file extension (any case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// `.md`, `.markdown`, `.mdx`: headings start sections; front matter
    /// is metadata (its `title` names the document), not text.
    Markdown,
    /// `.txt`: paragraphs only.
    Text,
    /// `.pdf`: the text layer, page by page.
    Pdf,
    /// `.html`, `.htm`, `.xhtml`: the main text; headings start sections.
    Html,
    /// `.docx`: paragraphs; `Title` and `Heading N` styles start sections.
    Docx,
    /// `.odt` (OpenDocument text): paragraphs; `<text:h>` headings and
    /// `Title` / `Heading N` paragraph styles start sections.
    Odt,
    /// `.epub` (EPUB 2 and 3): the spine's XHTML documents in reading
    /// order, each read as HTML; the navigation document left out.
    Epub,
    /// `.rst`, `.rest` (Sphinx, docutils): section titles start sections;
    /// explicit markup (`.. note::`, comments, targets) is not text.
    Rst,
    /// `.adoc`, `.asciidoc` (Asciidoctor, Antora): section titles
    /// start sections; the document header, attribute entries, block
    /// attributes, comments and block macros are not text.
    AsciiDoc,
}

impl Format {
    /// The format of a file name, by its extension (any case); `None` for
    /// files that are not indexed.
    pub fn of_path(name: &str) -> Option<Format> {
        let (stem, ext) = name.rsplit_once('.')?;
        let stem = stem.rsplit('/').next().unwrap_or(stem);
        if stem.is_empty() {
            return None;
        }
        let ext = ext.to_ascii_lowercase();
        Some(match ext.as_str() {
            "md" | "markdown" | "mdx" => Format::Markdown,
            "txt" => Format::Text,
            "rst" | "rest" => Format::Rst,
            "adoc" | "asciidoc" => Format::AsciiDoc,
            "pdf" => Format::Pdf,
            "html" | "htm" | "xhtml" => Format::Html,
            "docx" => Format::Docx,
            "odt" => Format::Odt,
            "epub" => Format::Epub,
            _ => return None,
        })
    }

    /// Short lower-case name (`"pdf"`), as used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Format::Markdown => "markdown",
            Format::Text => "text",
            Format::Rst => "restructuredtext",
            Format::AsciiDoc => "asciidoc",
            Format::Pdf => "pdf",
            Format::Html => "html",
            Format::Docx => "docx",
            Format::Odt => "odt",
            Format::Epub => "epub",
        }
    }
}

/// Why a file's text could not be extracted. The file is skipped with this
/// message (see [`UpdateReport::skipped`](crate::UpdateReport::skipped)); the
/// rest of the folder is indexed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExtractError {
    /// A Markdown or text file that is not UTF-8.
    #[error("not valid UTF-8 (bad byte at offset {offset})")]
    InvalidUtf8 {
        /// Byte offset of the first invalid byte.
        offset: usize,
    },
    /// A PDF whose pages carry no text (scanned images, or vector outlines):
    /// it needs OCR first.
    #[error("PDF has no text layer ({pages} page(s) without any text; scanned? run OCR first)")]
    NoTextLayer {
        /// Pages in the file.
        pages: usize,
    },
    /// A PDF encrypted with a user password.
    #[error("PDF is encrypted and cannot be opened without its password")]
    Encrypted,
    /// The file is not a readable document of its format.
    #[error("not a readable {format} file: {message}")]
    Corrupt {
        /// `"pdf"`, `"docx"`, …
        format: &'static str,
        /// What the parser said.
        message: String,
    },
}

impl ExtractError {
    pub(crate) fn corrupt(format: Format, message: impl std::fmt::Display) -> ExtractError {
        ExtractError::Corrupt {
            format: format.name(),
            message: message.to_string(),
        }
    }
}

/// A block of extracted text: a paragraph, or a heading (`level` 1 to 6)
/// whose text is the block's own text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TextBlock {
    pub(crate) range: Range<usize>,
    pub(crate) heading: Option<u8>,
}

/// A page of a PDF's extracted text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PageText {
    /// 1-based page number.
    pub(crate) number: u32,
    /// Byte range of the page's text.
    pub(crate) range: Range<usize>,
}

/// A document's text and structure.
#[derive(Debug, Clone, PartialEq)]
pub struct Extracted {
    /// The format it was read as.
    pub format: Format,
    /// The text chunks are cut from.
    pub text: String,
    /// The title the document itself gives (metadata or first heading);
    /// `None` when it gives none.
    pub title: Option<String>,
    /// Paragraphs and headings, in order, for extracted formats; `None` for
    /// Markdown and text, whose structure the chunker reads from the text.
    pub(crate) blocks: Option<Vec<TextBlock>>,
    /// PDF pages, in order (empty for other formats). Every block lies
    /// within one page.
    pub(crate) pages: Vec<PageText>,
    /// Glyph boxes of the text (PDF only).
    pub(crate) layout: Option<DocLayout>,
}

impl Extracted {
    /// Page numbers with the byte range of their text (empty unless PDF).
    pub fn pages(&self) -> impl Iterator<Item = (u32, Range<usize>)> + '_ {
        self.pages.iter().map(|p| (p.number, p.range.clone()))
    }
}

/// Reads `bytes` as the document format of `rel_path` (by extension).
/// Markdown and text must be UTF-8. Never panics: an extractor that fails
/// inside a dependency is reported as a corrupt file.
pub fn extract(rel_path: &str, bytes: &[u8]) -> Result<Extracted, ExtractError> {
    let format = Format::of_path(rel_path).unwrap_or(Format::Text);
    let plain = |format| {
        let text = std::str::from_utf8(bytes).map_err(|e| ExtractError::InvalidUtf8 {
            offset: e.valid_up_to(),
        })?;
        Ok(Extracted {
            format,
            text: text.to_owned(),
            title: None,
            blocks: None,
            pages: Vec::new(),
            layout: None,
        })
    };
    match format {
        Format::Markdown | Format::Text | Format::Rst | Format::AsciiDoc => plain(format),
        Format::Html => Ok(html::extract(bytes)),
        Format::Docx => guarded(format, || docx::extract(bytes)),
        Format::Odt => guarded(format, || odt::extract(bytes)),
        Format::Epub => guarded(format, || epub::extract(bytes)),
        // The PDF crates index into what the file says without always
        // checking it: a panic there is a bad file, not a bad index run.
        Format::Pdf => guarded(format, || pdf::extract(bytes)),
    }
}

fn guarded(
    format: Format,
    f: impl FnOnce() -> Result<Extracted, ExtractError>,
) -> Result<Extracted, ExtractError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "the parser failed".to_owned());
            Err(ExtractError::corrupt(
                format,
                format!("parser error: {what}"),
            ))
        }
    }
}

/// Builds extracted text block by block: blocks are separated by a blank
/// line, and white space inside a block is kept as given.
#[derive(Debug, Default)]
pub(crate) struct TextBuilder {
    pub(crate) text: String,
    pub(crate) blocks: Vec<TextBlock>,
}

impl TextBuilder {
    /// The document built, block by block, with the title its format gives.
    pub(crate) fn finish(self, format: Format, title: Option<String>) -> Extracted {
        Extracted {
            format,
            text: self.text,
            title,
            blocks: Some(self.blocks),
            pages: Vec::new(),
            layout: None,
        }
    }

    /// Appends a block (trimmed; nothing when blank). Returns its range.
    pub(crate) fn block(&mut self, body: &str, heading: Option<u8>) -> Option<Range<usize>> {
        let body = body.trim();
        if body.is_empty() {
            return None;
        }
        if !self.text.is_empty() {
            self.text.push_str("\n\n");
        }
        let start = self.text.len();
        self.text.push_str(body);
        let range = start..self.text.len();
        self.blocks.push(TextBlock {
            range: range.clone(),
            heading,
        });
        Some(range)
    }
}

/// Collapses runs of white space to one space (HTML, DOCX and ODT
/// paragraphs).
pub(crate) fn collapse_spaces(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            space = true;
        } else {
            if space && !out.is_empty() {
                out.push(' ');
            }
            space = false;
            out.push(c);
        }
    }
    out
}
