//! Arbitrary bytes as an HTML page or a DOCX file (the first byte picks),
//! extracted and chunked. Must not panic; every chunk is the extracted text
//! under its byte range, never empty, never over the size limit.
//!
//! PDF is left out: its parser (pdf-extract over lopdf) may panic on bad
//! files, which `groundcite_index::extract` catches and reports as a corrupt
//! file, but libFuzzer's panic hook aborts before any catch.
#![no_main]

use groundcite_index::{ChunkerConfig, chunk_extracted, extract};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let name = if pick % 2 == 0 { "page.html" } else { "file.docx" };
    let Ok(doc) = extract(name, bytes) else {
        return;
    };
    let cfg = ChunkerConfig { max_chars: 200, overlap_chars: 30 };
    for c in chunk_extracted(name, &doc, &cfg) {
        assert_eq!(doc.text.get(c.byte_range.clone()), Some(c.content.as_str()));
        assert!(!c.content.trim().is_empty());
        assert!(c.content.chars().count() <= cfg.max_chars);
        assert_eq!(c.page_number, None);
    }
});
