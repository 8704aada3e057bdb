//! # groundcite-index
//!
//! An embedded corpus index: point it at a folder of Markdown,
//! reStructuredText, AsciiDoc, text, PDF, HTML, DOCX, ODT and EPUB files,
//! and it returns [`groundcite_core::Chunk`]s ready for the verifier.
//! Chunks are exact substrings of the files (of the extracted text, for
//! PDF, HTML, DOCX, ODT and EPUB), so a quote the verifier accepts for a
//! chunk is also a verbatim quote of the document.
//!
//! ## Key types
//! - [`chunk_document`] with [`ChunkerConfig`] → [`DocChunk`]s: a pure
//!   function. A Markdown heading starts a chunk (and stays its first line),
//!   paragraphs are packed up to `max_chars` (default 1200 chars), a longer
//!   paragraph is split at sentence ends, then white space, then any char
//!   boundary, with pieces overlapping by about `overlap_chars` (default 150).
//!   IDs are `"<relative/path>#chunk-<N>"` with `N` counting from **1**.
//! - [`Index`]: a directory holding a tantivy BM25 index and a manifest.
//!   [`Index::open_or_create`], then [`Index::update`] with an
//!   [`IndexConfig`] (reporting [`Progress`], returning an [`UpdateReport`]),
//!   then [`Index::search`]. [`Index::correct_spelling`] reads a
//!   question's misspelt words as the corpus's words ([`spelling`]: the
//!   rule, [`spelling::Correction`]).
//! - [`document_title`] and [`source_url`]: a chunk's `source_title`
//!   (front matter `title`, else first level-1 heading, else first heading,
//!   else file name) and `source_url`
//!   (`base_url` joined with the percent-encoded relative path).
//! - [`IndexError`] / [`IndexErrorKind`]: every failure names its path.
//! - [`extract`] → [`Extracted`] (or [`ExtractError`]), then
//!   [`chunk_extracted`]: any supported [`Format`] to text and chunks.
//!
//! ## Incremental updates
//! The manifest (`groundcite-manifest.json` in the index directory, written
//! atomically after each commit) records, per relative path, the XXH3-128
//! hash of the file's bytes and its chunk count, plus the settings (chunker
//! configuration, base URL, pipeline version). An update re-chunks only files
//! whose hash changed, deletes the chunks of files that disappeared (by the
//! indexed `path` term), and re-indexes everything when the settings changed
//! or the manifest is missing or unreadable.
//!
//! ## What is indexed
//! Markdown (`.md`, `.markdown`, `.mdx`; front matter is metadata, its
//! `title` the document's title), reStructuredText (`.rst`, `.rest`:
//! section titles, explicit markup left out), AsciiDoc (`.adoc`,
//! `.asciidoc`: section titles, the document header, attribute
//! entries, comments and block macros left out), text (`.txt`), PDF
//! (`.pdf`, its text layer), HTML (`.html`, `.htm`, `.xhtml`, the main
//! text), DOCX (`.docx`), ODT (`.odt`, OpenDocument text) and EPUB
//! (`.epub`, the spine's documents), extension in any case, found
//! recursively in a deterministic order ([`Format`]). Hidden files and directories, the index directory
//! itself, and symbolic links (never followed) are left out. Files over
//! [`MAX_FILE_BYTES`], unreadable files, Markdown or text that is not UTF-8,
//! and documents that cannot be extracted ([`ExtractError`]: a PDF without
//! a text layer, an encrypted PDF, a corrupt file) are skipped and listed,
//! each with its reason, in [`UpdateReport::skipped`]; the rest is indexed.
//! Files of other kinds are counted by extension in
//! [`UpdateReport::other_kinds`], so a caller can say why a folder gave
//! an empty index. Nothing panics on odd bytes.
//!
//! [`extract`] turns a file into text: chunks of extracted formats are exact
//! substrings of that text. HTML, DOCX, ODT and EPUB headings start sections as
//! Markdown headings do; each PDF page is chunked on its own, so every PDF
//! chunk carries its [`Chunk::page_number`] (`None` for other formats). For
//! PDFs the index also keeps each character's glyph box, and
//! [`Index::locate`] / [`Index::attach_locations`] turn a verified quote's
//! span into rectangles on its page ([`groundcite_core::QuoteLocation`]).
//! Formats, libraries and measured fidelity: `docs/documents.md`.

//! ## Search
//! [`Index::search`] never parses query syntax: the text is cut into words by
//! the index's own analyzer (simple tokenizer, lower-case, English stop
//! words, English stemmer) and the words are OR-ed, each matched against the
//! content and, weighted 1.5, the document title and the chunk's headings.
//!
//! ## Features of dependencies
//! tantivy is built without its default features: `mmap` (on-disk index),
//! `lz4-compression` (pure Rust) and `stemmer` only; no zstd, which compiles
//! C.
//!
//! ## Example
//! ```
//! use groundcite_index::{Index, IndexConfig};
//!
//! let docs = tempfile::tempdir()?;
//! std::fs::write(
//!     docs.path().join("refunds.md"),
//!     "# Refund policy\n\nRefunds are issued within 5 business days.\n",
//! )?;
//! let index_dir = tempfile::tempdir()?;
//! let mut index = Index::open_or_create(index_dir.path())?;
//! let report = index.update(docs.path(), &IndexConfig::default(), &mut |_| {})?;
//! assert_eq!((report.added, report.chunks), (1, 1));
//!
//! let hits = index.search("how fast are refunds issued?", 3)?;
//! assert_eq!(hits[0].chunk_id, "refunds.md#chunk-1");
//! assert_eq!(hits[0].source_title.as_deref(), Some("Refund policy"));
//! assert!(hits[0].content.contains("within 5 business days"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`Chunk::page_number`]: groundcite_core::Chunk::page_number

mod asciidoc;
mod chunker;
mod document;
mod error;
mod formats;
mod index;
mod layout;
mod manifest;
mod markdown;
mod rst;
mod sentences;
pub mod spelling;
mod walk;

pub use chunker::{
    ChunkerConfig, DocChunk, chunk_document, chunk_extracted, chunk_id, chunk_markup,
};
pub use document::{document_title, extracted_title, source_url};
pub use error::{IndexError, IndexErrorKind};
pub use formats::{ExtractError, Extracted, Format, extract};
pub use index::{
    Coverage, Index, IndexConfig, IndexStats, MAX_FILE_BYTES, MAX_QUERY_TERMS, Progress,
    UpdateReport,
};
pub use sentences::{Embed, EmbedFailure, SentenceHit, embed_text};
