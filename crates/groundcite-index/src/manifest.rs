//! What the index holds, file by file, so that updates touch only what
//! changed.
//!
//! Stored as `groundcite-manifest.json` inside the index directory, written
//! atomically (temporary file, then rename) after the index commits. A
//! missing or unreadable manifest, or one written under other settings, makes
//! the next update rebuild the index from scratch; this is always safe,
//! because the documents are the source of truth.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::chunker::ChunkerConfig;
use crate::error::IndexError;

/// File name of the manifest inside the index directory.
pub(crate) const MANIFEST_FILE: &str = "groundcite-manifest.json";

/// Version of the chunking algorithm and analyzer. Bump it whenever the
/// chunks or tokens produced for the same input change: older indexes are
/// then rebuilt.
// 3: a PDF paragraph's lines are joined with a space, not a line break.
// 4: a single line break inside a paragraph no longer ends a sentence (the
//    sentence store's units and vectors change for hard-wrapped files).
// 5: front matter is metadata, not text; setext headings start sections and
//    are not statements; thematic breaks separate blocks; `.mdx` is read.
// 6: an HTML page's title loses its site's name; Sphinx's permalinks go.
// 7: a dot that closes an abbreviation ("e.g.", "etc." before a lower-case
//    word) no longer ends a sentence (the sentence store's units change);
//    AsciiDoc files are read.
// 8: an extracted document's headings are no longer stored sentences (they
//    were candidate quotes and gate evidence); an HTML table row is one
//    paragraph, its cells separated by " | "; an HTML page's own table of
//    contents (blocks of in-page links only) is left out.
// 9: a DOCX or ODT table row is one paragraph, its cells separated by " | ".
// 10: an HTML definition list's description starts with its term ("-E:
//    Enables the printer …").
// 11: so does one whose `</dt>` and `</dd>` are left out (man pages
//    converted to HTML).
// 12: several terms of one description are joined ("-S, --gpg-sign,
//    --no-gpg-sign: GPG-sign commits."), not the last alone.
// 13: HTML contents lists, back-of-book indexes and image captions are left
//    out; more than four terms before one description stand apart.
// 14: a description that opens with a table does not open its first row
//    with a separator; an admonition's label neither leads a description
//    (DocBook) nor stands as a cell of its own (Asciidoctor: "Note: …").
// 15: an FAQ entry's question (`**Q: …?**`, a paragraph of one question)
//    titles its answer as a heading does; admonition fences (`:::tip`,
//    `!!! note`) are lines of their own; questions are not statements.
// 16: a Markdown table row is one sentence, whatever its cells hold.
// 17: a Markdown table's header row and HTML comments are not statements.
// 18: neither is a short label in bold or italics ("**On this page**").
const PIPELINE_VERSION: u32 = 18;

/// Everything that, when changed, invalidates every indexed chunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Settings {
    pipeline_version: u32,
    chunker: ChunkerConfig,
    base_url: Option<String>,
}

impl Settings {
    pub(crate) fn new(chunker: ChunkerConfig, base_url: Option<String>) -> Settings {
        Settings {
            pipeline_version: PIPELINE_VERSION,
            chunker,
            base_url,
        }
    }
}

/// One indexed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FileEntry {
    /// XXH3-128 of the file's bytes, 32 lowercase hex digits.
    pub(crate) xxh3_128: String,
    /// Size in bytes.
    pub(crate) bytes: u64,
    /// Number of chunks indexed for this file.
    pub(crate) chunks: usize,
}

/// The manifest: settings plus one entry per indexed file, keyed by relative
/// path (forward slashes), in sorted order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Manifest {
    /// `None` for a fresh (or unreadable) manifest: the next update rebuilds.
    pub(crate) settings: Option<Settings>,
    pub(crate) files: BTreeMap<String, FileEntry>,
}

pub(crate) fn hash_hex(bytes: &[u8]) -> String {
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(bytes))
}

impl Manifest {
    /// Reads the manifest of `index_dir`. A missing or corrupt one reads as
    /// empty (forcing a rebuild); other I/O errors are errors.
    pub(crate) fn load(index_dir: &Path) -> Result<Manifest, IndexError> {
        let path = index_dir.join(MANIFEST_FILE);
        match fs::read(&path) {
            Ok(bytes) => Ok(serde_json::from_slice(&bytes).unwrap_or_default()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Manifest::default()),
            Err(e) => Err(IndexError::io("read manifest", &path, e)),
        }
    }

    /// Writes the manifest atomically: a temporary file in the same
    /// directory, flushed to disk, then renamed over the old one.
    pub(crate) fn save(&self, index_dir: &Path) -> Result<(), IndexError> {
        let path = index_dir.join(MANIFEST_FILE);
        let tmp = index_dir.join(format!("{MANIFEST_FILE}.tmp"));
        let json = serde_json::to_vec_pretty(self)
            .map_err(|e| IndexError::io("serialize manifest", &path, std::io::Error::other(e)))?;
        let write = || -> std::io::Result<()> {
            let mut file = fs::File::create(&tmp)?;
            file.write_all(&json)?;
            file.sync_all()
        };
        write().map_err(|e| IndexError::io("write manifest", &tmp, e))?;
        fs::rename(&tmp, &path).map_err(|e| IndexError::io("replace manifest", &path, e))
    }
}
