//! Index build, no-op update and search latency on `corpus/sample`.

use std::path::Path;

use divan::Bencher;
use groundcite_index::{Index, IndexConfig};

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../corpus/sample");

fn main() {
    divan::main();
}

fn built() -> (tempfile::TempDir, Index) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut index = Index::open_or_create(dir.path()).expect("open index");
    index
        .update(Path::new(SAMPLE), &IndexConfig::default(), &mut |_| {})
        .expect("index sample");
    (dir, index)
}

/// Full build of the sample corpus into a fresh directory.
#[divan::bench(sample_count = 20)]
fn full_build(bencher: Bencher) {
    bencher
        .with_inputs(|| tempfile::tempdir().expect("temp dir"))
        .bench_local_values(|dir| {
            let mut index = Index::open_or_create(dir.path()).expect("open index");
            index
                .update(Path::new(SAMPLE), &IndexConfig::default(), &mut |_| {})
                .expect("index sample");
            dir
        });
}

/// Update with nothing changed: walk, hash, compare.
#[divan::bench]
fn noop_update(bencher: Bencher) {
    let (_dir, mut index) = built();
    bencher.bench_local(|| {
        index
            .update(Path::new(SAMPLE), &IndexConfig::default(), &mut |_| {})
            .expect("update")
    });
}

/// One search, top 5.
#[divan::bench(args = [
    "How long does it take to get my refund?",
    "two-factor authentication backup codes lost phone",
    "x",
])]
fn search(bencher: Bencher, query: &str) {
    let (_dir, index) = built();
    bencher.bench_local(|| index.search(divan::black_box(query), 5).expect("search"));
}

/// Spelling correction of a question before it is searched: one with no
/// word to correct, one with two misspelt words, one with a long word the
/// English list lacks (every one-edit candidate looked up).
#[divan::bench(args = [
    "How long does it take to get my refund?",
    "How long does standrd shiping take?",
    "authenticatorbackups",
])]
fn correct_spelling(bencher: Bencher, question: &str) {
    let (_dir, index) = built();
    bencher.bench_local(|| {
        index
            .correct_spelling(divan::black_box(question))
            .expect("correct")
    });
}
