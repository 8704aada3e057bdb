//! Text fidelity of the document extractors: the share of a reference
//! text's sentences found verbatim (after white space and typography are
//! normalised) in the text extracted from the same document in another
//! format.
//!
//! ```sh
//! cargo run --release -p groundcite-index --example fidelity -- REFERENCE.txt DOC.pdf [DOC.html ...]
//! ```
//!
//! The documents' texts are joined; the reference's sentences (40 to 300
//! chars, prose only) are sampled evenly, at most 1000. For PDFs the text of
//! two other pure-Rust extractors is measured beside ours: lopdf's
//! `extract_text` and pdf-extract's own plain-text output.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::fs;

fn normalize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = true;
    for c in s.chars() {
        let mapped: &str = match c {
            '\u{2018}' | '\u{2019}' | '\u{201b}' | '`' => "'",
            '\u{201c}' | '\u{201d}' => "\"",
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2212}' => "-",
            '\u{fb01}' => "fi",
            '\u{fb02}' => "fl",
            '\u{fb00}' => "ff",
            '\u{fb03}' => "ffi",
            '\u{fb04}' => "ffl",
            '\u{00ad}' => "",
            '\u{2026}' => "...",
            c if c.is_whitespace() => {
                if !space {
                    out.push(' ');
                }
                space = true;
                continue;
            }
            _ => {
                out.push(c);
                space = false;
                continue;
            }
        };
        out.push_str(mapped);
        space = false;
    }
    out.trim_end().to_owned()
}

fn sentences(reference: &str) -> Vec<String> {
    let mut out = Vec::new();
    for para in reference.split("\n\n") {
        let para = normalize(para);
        let mut start = 0;
        let bytes = para.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            let end_here =
                matches!(b, b'.' | b'!' | b'?') && (i + 1 == bytes.len() || bytes[i + 1] == b' ');
            if end_here {
                let s = para[start..=i].trim();
                start = i + 1;
                let n = s.chars().count();
                let prose = s.chars().next().is_some_and(char::is_uppercase)
                    && !s.contains(['*', '|', '[', ']', '<', '>', '#', '_', '='])
                    && !s.contains("  ")
                    && s.chars().filter(|c| c.is_alphabetic() || *c == ' ').count() * 10 >= n * 9;
                if (40..=300).contains(&n) && prose {
                    out.push(s.to_owned());
                }
            }
        }
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (reference, docs) = args
        .split_first()
        .expect("usage: fidelity REFERENCE.txt DOC...");
    let reference = fs::read_to_string(reference).unwrap();
    let all = sentences(&reference);
    let step = (all.len() / 1000).max(1);
    let sample: Vec<&String> = all.iter().step_by(step).take(1000).collect();

    let mut ours = String::new();
    let mut lopdf_text = String::new();
    let mut pdf_extract_text = String::new();
    let mut pdfs = 0;
    for doc in docs {
        let bytes = fs::read(doc).unwrap();
        match groundcite_index::extract(doc, &bytes) {
            Ok(e) => {
                ours.push_str(&e.text);
                ours.push('\n');
            }
            Err(e) => println!("{doc}: {e}"),
        }
        if doc.ends_with(".pdf") {
            pdfs += 1;
            if let Ok(d) = lopdf::Document::load_mem(&bytes) {
                let pages: Vec<u32> = d.get_pages().keys().copied().collect();
                lopdf_text.push_str(&d.extract_text(&pages).unwrap_or_default());
            }
            // pdf-extract alone panics on some real files (the Developer's
            // Reference's ToUnicode maps): that counts as no text.
            let plain = std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem(&bytes));
            pdf_extract_text.push_str(&plain.ok().and_then(Result::ok).unwrap_or_default());
        }
    }
    // Words hyphenated at a line end ("dis-\ntribution") are what the page
    // shows, but no sentence of the reference has them where the PDF does:
    // the second figure joins them on both sides.
    let join = |s: &str| s.replace("- ", "");
    let measure = |name: &str, text: &str| {
        let text = normalize(text);
        let found = sample.iter().filter(|s| text.contains(s.as_str())).count();
        let joined = join(&text);
        let found_joined = sample.iter().filter(|s| joined.contains(&join(s))).count();
        let pct = |n: usize| 100.0 * n as f64 / sample.len().max(1) as f64;
        println!(
            "{name:<24} {found:>5}/{:<5} {:5.1}%   hyphenation joined: {:5.1}%",
            sample.len(),
            pct(found),
            pct(found_joined)
        );
        if std::env::var_os("FIDELITY_MISSES").is_some() {
            for s in sample.iter().filter(|s| !text.contains(s.as_str())).take(5) {
                println!("    missed: {s}");
            }
        }
    };
    if let Some(path) = std::env::var_os("FIDELITY_DUMP") {
        fs::write(path, &ours).unwrap();
    }
    measure("groundcite-index", &ours);
    if pdfs > 0 {
        measure("lopdf extract_text", &lopdf_text);
        measure("pdf-extract plain text", &pdf_extract_text);
    }
}
