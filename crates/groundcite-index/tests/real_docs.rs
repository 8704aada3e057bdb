//! Real manuals nobody here wrote (Debian packages, fetched by
//! `scripts/fetch-real-docs`; see docs/documents.md for versions and
//! licences): extraction fidelity against the text edition the same
//! package ships, pages and titles, a real index over them (the Developer's
//! Reference PDF among them, whose ToUnicode maps need the CMap repair), and
//! a broken PDF skipped with its name.
//!
//! Runs when `GROUNDCITE_REAL_DOCS` names the fetched folder (`scripts/test`
//! sets it; a missing file then fails); without it the tests say so and
//! pass.

#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::fs;
use std::path::PathBuf;

use groundcite_core::Span;
use groundcite_index::{Format, Index, IndexConfig, extract};

fn root() -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("GROUNDCITE_REAL_DOCS") else {
        eprintln!("GROUNDCITE_REAL_DOCS not set: run scripts/fetch-real-docs and set it");
        return None;
    };
    Some(PathBuf::from(dir))
}

/// White space collapsed, typographic quotes and dashes made plain.
fn normalize(s: &str) -> String {
    let mapped: String = s
        .chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' => '\'',
            '\u{201c}' | '\u{201d}' => '"',
            '\u{2010}'..='\u{2014}' => '-',
            c => c,
        })
        .collect();
    mapped.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether a reference "sentence" is an entry of its contents lists: cut at
/// ". " they read "First response to package management troubles 2.2.",
/// the title of one entry and the number of the next. The HTML reader
/// leaves contents lists out on purpose (navigation, not text).
fn contents_entry(s: &str) -> bool {
    let Some((_, number)) = s.rsplit_once(' ') else {
        return false;
    };
    number.ends_with('.')
        && number
            .split('.')
            .all(|p| p.chars().all(|c| c.is_ascii_digit()))
}

/// Share of the reference's prose sentences (40 to 300 chars; not the
/// entries of its contents lists) found verbatim, after normalisation, in
/// `text`.
fn fidelity(reference: &str, text: &str) -> f64 {
    let text = normalize(text);
    let mut found = 0;
    let mut total = 0;
    for para in reference.split("\n\n") {
        let para = normalize(para);
        for s in para.split_inclusive(". ") {
            let s = s.trim();
            let n = s.chars().count();
            let prose = s.ends_with('.')
                && s.chars().next().is_some_and(char::is_uppercase)
                && !s.contains(['*', '|', '[', ']', '<', '>', '#', '_', '='])
                && s.chars().filter(|c| c.is_alphabetic() || *c == ' ').count() * 10 >= n * 9;
            if (40..=300).contains(&n) && prose && !contents_entry(s) {
                total += 1;
                found += usize::from(text.contains(s));
            }
        }
    }
    assert!(total > 100, "only {total} reference sentences");
    found as f64 / total as f64
}

#[test]
fn debian_reference_pdf_and_html() {
    let Some(root) = root() else { return };
    let base = root.join("debian-reference-en/usr/share/debian-reference");
    let reference = fs::read_to_string(base.join("debian-reference.en.txt")).unwrap();

    let pdf = extract(
        "debian-reference.en.pdf",
        &fs::read(base.join("debian-reference.en.pdf")).unwrap(),
    )
    .unwrap();
    assert_eq!(pdf.format, Format::Pdf);
    assert_eq!(pdf.title.as_deref(), Some("Debian Reference"));
    let pages = pdf.pages().count();
    assert!(pages > 200, "{pages} pages");
    let f = fidelity(&reference, &pdf.text);
    assert!(f >= 0.84, "PDF fidelity {f:.3}");

    let mut html = String::new();
    for entry in fs::read_dir(&base).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "html") {
            let e = extract("ch.html", &fs::read(&path).unwrap()).unwrap();
            assert!(e.title.is_some(), "{}", path.display());
            html.push_str(&e.text);
            html.push_str("\n\n");
        }
    }
    let f = fidelity(&reference, &html);
    assert!(f >= 0.97, "HTML fidelity {f:.3}");
    // DocBook's navigation header and footer are dropped.
    assert!(!html.contains("Prev Next"), "navigation kept");
}

#[test]
fn developers_reference_pdf_reads_through_the_cmap_repair() {
    let Some(root) = root() else { return };
    let base = root.join("developers-reference/usr/share/developers-reference");
    let reference = fs::read_to_string(base.join("developers-reference.txt")).unwrap();
    // Its ToUnicode maps give ranges one-byte destinations (`<E0> <F6>
    // <E0>`), on which pdf-extract alone panics.
    let pdf = extract(
        "developers-reference.pdf",
        &fs::read(base.join("developers-reference.pdf")).unwrap(),
    )
    .unwrap();
    let pages = pdf.pages().count();
    assert!(pages > 100, "{pages} pages");
    // `ë` comes through such a range.
    assert!(pdf.text.contains("Raphaël"));
    assert!(!pdf.text.contains('\u{fffd}'));
    let f = fidelity(&reference, &pdf.text);
    assert!(f >= 0.6, "PDF fidelity {f:.3}");
}

#[test]
fn a_real_folder_indexes_with_pages_and_names_what_it_skips() {
    let Some(root) = root() else { return };
    let docs = tempfile::tempdir().unwrap();
    let copy = |from: &str, to: &str| fs::copy(root.join(from), docs.path().join(to)).unwrap();
    copy(
        "debian-policy/usr/share/doc/debian-policy/fhs/fhs-3.0.pdf",
        "fhs.pdf",
    );
    copy(
        "developers-reference/usr/share/developers-reference/developers-reference.pdf",
        "devref.pdf",
    );
    copy(
        "apt-doc/usr/share/doc/apt-doc/guide.html/ch2.html",
        "apt-guide-ch2.html",
    );
    // A download cut short: the first 4 KiB of a real PDF.
    let fhs = fs::read(docs.path().join("fhs.pdf")).unwrap();
    fs::write(docs.path().join("cut-short.pdf"), &fhs[..4096]).unwrap();
    let index_dir = tempfile::tempdir().unwrap();
    let mut index = Index::open_or_create(index_dir.path()).unwrap();
    let report = index
        .update(docs.path(), &IndexConfig::default(), &mut |_| {})
        .unwrap();
    assert_eq!(report.added, 3, "{report:?}");
    assert_eq!(report.skipped.len(), 1, "{report:?}");
    assert_eq!(report.skipped[0].0, "cut-short.pdf");
    assert!(
        report.skipped[0].1.starts_with("not a readable pdf file"),
        "{report:?}"
    );

    // FHS 3.0, section 3.12: "/etc/opt : Configuration files for /opt".
    let hits = index
        .search(
            "configuration files for add-on application software packages /etc/opt",
            5,
        )
        .unwrap();
    let hit = hits
        .iter()
        .find(|c| c.content.contains("/etc/opt"))
        .unwrap();
    assert!(hit.chunk_id.starts_with("fhs.pdf#chunk-"));
    let page = hit.page_number.unwrap();
    assert!((10..=40).contains(&page), "page {page}");
    let at = hit.content.find("/etc/opt").unwrap();
    let start = hit.content[..at].chars().count();
    let loc = index
        .locate(&hit.chunk_id, Span::new(start, start + 8))
        .unwrap();
    assert_eq!(loc.page_number, page);
    let [x0, y0, x1, y1] = loc.rects[0];
    assert!(
        0.0 <= x0 && x0 < x1 && x1 <= 612.0 && 0.0 <= y0 && y0 < y1 && y1 <= 792.0,
        "{loc:?}"
    );

    let html = index.all_chunks().unwrap();
    let ch2: Vec<_> = html
        .iter()
        .filter(|c| c.chunk_id.starts_with("apt-guide-ch2.html"))
        .collect();
    assert!(!ch2.is_empty());
    assert!(ch2.iter().all(|c| c.page_number.is_none()));
}
