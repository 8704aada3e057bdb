//! Embedding throughput on realistic chunks and the latency of one query,
//! with the model `scripts/setup` installs. Thread count: see the crate
//! documentation (`RAYON_NUM_THREADS`, else the physical cores).

use std::path::Path;
use std::sync::OnceLock;

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};
use groundcite_embed::{Embedder, find_model};

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../corpus/sample");

fn main() {
    eprintln!("matmul threads: {}", groundcite_embed::threads());
    divan::main();
}

fn embedder() -> &'static Embedder {
    static E: OnceLock<Embedder> = OnceLock::new();
    E.get_or_init(|| {
        let dir = find_model(None).unwrap_or_else(|e| panic!("{e}"));
        Embedder::load(&dir).unwrap_or_else(|e| panic!("{e}"))
    })
}

fn markdown(dir: &Path, out: &mut String) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("corpus/sample")
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            markdown(&p, out);
        } else if p.extension().is_some_and(|e| e == "md") {
            out.push_str(&std::fs::read_to_string(&p).expect("read sample"));
            out.push_str("\n\n");
        }
    }
}

/// 32 chunks of about 1,000 characters of the bundled help centre, cut at
/// white space (the corpus is reused from other offsets when it runs out).
fn chunks() -> Vec<String> {
    let mut text = String::new();
    markdown(Path::new(SAMPLE), &mut text);
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut out = Vec::new();
    let mut at = 0;
    while out.len() < 32 {
        let mut chunk = String::new();
        while chunk.len() < 1000 {
            chunk.push_str(words[at % words.len()]);
            chunk.push(' ');
            at += 1;
        }
        out.push(chunk);
        at += 17;
    }
    out
}

/// 32 chunks of ~1,000 characters in one call (~220 tokens each).
#[divan::bench(sample_count = 10, sample_size = 1)]
fn chunks_batch_32(bencher: Bencher) {
    let e = embedder();
    let chunks = chunks();
    let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
    bencher
        .counter(ItemsCount::new(refs.len()))
        .bench_local(|| e.embed(black_box(&refs)).expect("embed"));
}

/// 240 sentences of the bundled help centre, each prefixed with a
/// heading-like context as the index embeds them, in groups of 6 (a chunk's
/// sentences).
fn sentence_groups() -> Vec<Vec<String>> {
    let mut text = String::new();
    markdown(Path::new(SAMPLE), &mut text);
    let sentences: Vec<String> = text
        .split(['.', '?', '!'])
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|s| s.len() > 20 && !s.starts_with('#'))
        .map(|s| format!("Help centre > Section: {s}."))
        .collect();
    (0..240)
        .map(|i| sentences[i % sentences.len()].clone())
        .collect::<Vec<_>>()
        .chunks(6)
        .map(<[String]>::to_vec)
        .collect()
}

/// The same 240 sentences, one call per chunk of 6 (how the index embedded
/// until 2026-12-06).
#[divan::bench(sample_count = 5, sample_size = 1)]
fn sentences_per_chunk(bencher: Bencher) {
    let e = embedder();
    let groups = sentence_groups();
    bencher.counter(ItemsCount::new(240usize)).bench_local(|| {
        for g in &groups {
            let refs: Vec<&str> = g.iter().map(String::as_str).collect();
            black_box(e.embed(black_box(&refs)).expect("embed"));
        }
    });
}

/// The same 240 sentences in one call (a file's sentences together).
#[divan::bench(sample_count = 5, sample_size = 1)]
fn sentences_one_call(bencher: Bencher) {
    let e = embedder();
    let all: Vec<String> = sentence_groups().concat();
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    bencher
        .counter(ItemsCount::new(refs.len()))
        .bench_local(|| e.embed(black_box(&refs)).expect("embed"));
}

/// One short query.
#[divan::bench(sample_count = 50)]
fn query(bencher: Bencher) {
    let e = embedder();
    bencher.bench_local(|| {
        e.embed(black_box(&["How long does it take to get my refund?"]))
            .expect("embed")
    });
}

/// Tokenizing the 32 chunks (no model).
#[divan::bench(sample_count = 20)]
fn tokenize_chunks(bencher: Bencher) {
    let e = embedder();
    let chunks = chunks();
    bencher
        .counter(ItemsCount::new(chunks.len()))
        .bench_local(|| {
            chunks
                .iter()
                .map(|c| e.tokenizer().encode_truncated(black_box(c), 256).len())
                .sum::<usize>()
        });
}

/// Loading the model (files in the page cache).
#[divan::bench(sample_count = 10, sample_size = 1)]
fn load(bencher: Bencher) {
    let dir = find_model(None).unwrap_or_else(|e| panic!("{e}"));
    bencher.bench_local(|| Embedder::load(black_box(&dir)).expect("load"));
}
