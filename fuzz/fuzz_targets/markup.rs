//! Arbitrary bytes as a Markdown, MDX, reStructuredText, AsciiDoc or text
//! file (the first byte picks): front matter, setext headings, MDX markup,
//! section adornments, directives, AsciiDoc headers and delimited blocks all
//! go through the chunker and the sentence rule. Must not panic; every chunk is the file's text under its byte
//! range, never empty, never over the size limit; every candidate sentence
//! lies inside its chunk, and a table header found for one lies above it.
#![no_main]

use groundcite_core::sentences::{statement_spans_in, table_header};
use groundcite_index::{ChunkerConfig, chunk_extracted, chunk_markup, extract, extracted_title};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let name = ["doc.md", "page.mdx", "guide.rst", "notes.txt", "manual.adoc"][usize::from(pick % 5)];
    let Ok(doc) = extract(name, bytes) else {
        return;
    };
    let _ = extracted_title(name, &doc);
    let cfg = ChunkerConfig {
        max_chars: 200,
        overlap_chars: 30,
    };
    for c in chunk_extracted(name, &doc, &cfg) {
        assert_eq!(doc.text.get(c.byte_range.clone()), Some(c.content.as_str()));
        assert!(!c.content.trim().is_empty());
        assert!(c.content.chars().count() <= cfg.max_chars);
        for r in statement_spans_in(&c.content, chunk_markup(&c.chunk_id)) {
            assert!(c.content.get(r.clone()).is_some());
            // A quote of the sentence would carry this header row.
            if let Some(h) = table_header(&c.content, r.start) {
                assert!(c.content.get(h.clone()).is_some_and(|t| t.contains('|')));
                assert!(h.end < r.start);
            }
        }
    }
});
