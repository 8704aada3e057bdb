//! # groundcite-index
//!
//! An embedded corpus index: point it at a folder of Markdown and text files,
//! and it returns [`groundcite_core::Chunk`]s ready for the verifier. Chunks
//! are exact substrings of the files, so a quote the verifier accepts for a
//! chunk is also a verbatim quote of the file.
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
//!   then [`Index::search`].
//! - [`document_title`] and [`source_url`]: a chunk's `source_title` (first
//!   `# ` heading, else first heading, else file name) and `source_url`
//!   (`base_url` joined with the percent-encoded relative path).
//! - [`IndexError`] / [`IndexErrorKind`]: every failure names its path.
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
//! `.md`, `.markdown` and `.txt` files (extension in any case), found
//! recursively in a deterministic order. Hidden files and directories, the
//! index directory itself, and symbolic links (never followed) are left out.
//! Files over [`MAX_FILE_BYTES`], invalid UTF-8 and unreadable files are
//! skipped and listed in [`UpdateReport::skipped`]; nothing panics on odd
//! bytes.
//!
//! **PDF is not supported.** No maintained pure-Rust PDF text extractor was
//! adopted; convert PDFs to text first. [`Chunk::page_number`] is stored and
//! returned (always `None` for the formats above), so a paged format can be
//! added without changing the index schema.
//!
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

mod chunker;
mod document;
mod error;
mod index;
mod manifest;
mod markdown;
mod sentences;
mod walk;

pub use chunker::{ChunkerConfig, DocChunk, chunk_document, chunk_id};
pub use document::{document_title, source_url};
pub use error::{IndexError, IndexErrorKind};
pub use index::{
    Coverage, Index, IndexConfig, IndexStats, MAX_FILE_BYTES, MAX_QUERY_TERMS, Progress,
    UpdateReport,
};
pub use sentences::{Embed, EmbedFailure, SentenceHit, embed_text};
