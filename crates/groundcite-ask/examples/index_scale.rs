//! Indexing at scale, on one machine: documents/s and chunks/s per format,
//! index size, retrieval latency (p50/p99), and the time to re-index after
//! one file changes. Run by `bench/index_scale.sh` on a corpus from
//! `groundcite-index`'s `gen_corpus` example (one subfolder per format).
//!
//! ```sh
//! cargo run --release -p groundcite-ask --example index_scale -- CORPUS WORKDIR [--embed]
//! ```
//!
//! With `--embed`, sentences are embedded with the installed
//! all-MiniLM-L6-v2 (as `groundcite ask` does) and queries run through the
//! hybrid retrieval of `groundcite_ask::retrieve`; without, BM25 alone.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::fs;
use std::path::Path;
use std::time::Instant;

use groundcite_ask::{AskSettings, GateMode};
use groundcite_index::{Index, IndexConfig};

fn dir_size(p: &Path) -> u64 {
    fs::read_dir(p)
        .map(|rd| {
            rd.flatten()
                .map(|e| {
                    let m = e.metadata().unwrap();
                    if m.is_dir() {
                        dir_size(&e.path())
                    } else {
                        m.len()
                    }
                })
                .sum()
        })
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let corpus = Path::new(&args[0]);
    let work = Path::new(&args[1]);
    let embed = if args.iter().any(|a| a == "--embed") {
        Some(
            groundcite_ask::load_embedder(None)
                .unwrap()
                .expect("no embedding model installed"),
        )
    } else {
        None
    };
    let _ = fs::remove_dir_all(work);
    let cfg = IndexConfig::default();
    let mut formats: Vec<String> = fs::read_dir(corpus)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    formats.sort();
    println!("| format | documents | chunks | seconds | documents/s | chunks/s |");
    println!("|---|---:|---:|---:|---:|---:|");
    for f in &formats {
        let mut index = Index::open_or_create(&work.join(format!("by-format/{f}"))).unwrap();
        let t = Instant::now();
        let r = index
            .update_with(&corpus.join(f), &cfg, embed.as_deref(), &mut |_| {})
            .unwrap();
        let s = t.elapsed().as_secs_f64();
        assert!(r.skipped.is_empty(), "{:?}", r.skipped);
        println!(
            "| {f} | {} | {} | {s:.1} | {:.0} | {:.0} |",
            r.added,
            r.chunks,
            r.added as f64 / s,
            r.chunks as f64 / s
        );
    }

    let all = work.join("all");
    let mut index = Index::open_or_create(&all).unwrap();
    let t = Instant::now();
    let r = index
        .update_with(corpus, &cfg, embed.as_deref(), &mut |_| {})
        .unwrap();
    let full = t.elapsed().as_secs_f64();
    println!();
    println!(
        "whole folder: {} documents, {} chunks in {full:.1} s ({:.0} documents/s, {:.0} chunks/s); index {:.1} MiB on disk",
        r.added,
        r.chunks,
        r.added as f64 / full,
        r.chunks as f64 / full,
        dir_size(&all) as f64 / (1024.0 * 1024.0)
    );

    // Queries: eight words from each of 300 chunks spread over the corpus.
    let chunks = index.all_chunks().unwrap();
    let step = (chunks.len() / 300).max(1);
    let queries: Vec<String> = chunks
        .iter()
        .step_by(step)
        .take(300)
        .map(|c| {
            c.content
                .split_whitespace()
                .skip(3)
                .take(8)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let settings = AskSettings::with_gate(GateMode::Retrieval);
    let mut times = Vec::new();
    for q in &queries {
        let t = Instant::now();
        let found = groundcite_ask::retrieve(&index, embed.as_deref(), q, &settings).unwrap();
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        std::hint::black_box(found);
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let pct = |p: f64| times[((times.len() as f64 - 1.0) * p).round() as usize];
    println!(
        "retrieval ({} queries, groundcite_ask::retrieve): p50 {:.1} ms, p99 {:.1} ms",
        times.len(),
        pct(0.5),
        pct(0.99)
    );

    // One file changes: re-index the whole folder.
    for f in &formats {
        let dir = corpus.join(f);
        let mut files: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        files.sort();
        let victim = &files[0];
        let original = fs::read(victim).unwrap();
        // Markdown, text, HTML: one more sentence; PDF, DOCX: the bytes of
        // another file of the same format.
        let changed = match f.as_str() {
            "md" | "txt" | "html" => {
                let mut c = original.clone();
                c.extend_from_slice(b"\n\nOne more sentence was added to this document.\n");
                c
            }
            _ => fs::read(&files[1]).unwrap(),
        };
        fs::write(victim, &changed).unwrap();
        let t = Instant::now();
        let r = index
            .update_with(corpus, &cfg, embed.as_deref(), &mut |_| {})
            .unwrap();
        let s = t.elapsed().as_secs_f64();
        assert_eq!(r.changed, 1, "{r:?}");
        println!(
            "re-index after one {f} file changed: {s:.2} s ({} unchanged)",
            r.unchanged
        );
        fs::write(victim, &original).unwrap();
        index
            .update_with(corpus, &cfg, embed.as_deref(), &mut |_| {})
            .unwrap();
    }
}
