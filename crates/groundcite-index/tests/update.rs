//! Incremental updates, skipped files, metadata and hostile queries.

#![allow(clippy::unwrap_used)] // Test helpers outside #[test] fns.

use std::fs;
use std::path::Path;

use groundcite_index::{ChunkerConfig, Index, IndexConfig, IndexErrorKind, UpdateReport};

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn update(index: &mut Index, docs: &Path, cfg: &IndexConfig) -> UpdateReport {
    index.update(docs, cfg, &mut |_| {}).unwrap()
}

fn ids(index: &Index, query: &str) -> Vec<String> {
    index
        .search(query, 50)
        .unwrap()
        .into_iter()
        .map(|c| c.chunk_id)
        .collect()
}

/// Three documents; `b.md` has two chunks.
fn corpus() -> tempfile::TempDir {
    let docs = tempfile::tempdir().unwrap();
    write(
        docs.path(),
        "a.md",
        "# Alpha\n\nThe aardvark sleeps all day.\n",
    );
    write(
        docs.path(),
        "sub/b.md",
        "# Bravo\n\nBadgers dig burrows.\n\n## Diet\n\nBadgers eat worms.\n",
    );
    write(
        docs.path(),
        "c.txt",
        "Caribou migrate in herds.\n\nCaribou are reindeer.",
    );
    write(docs.path(), "ignored.org", "not indexed");
    write(docs.path(), ".hidden/h.md", "# Hidden\n\nhedgehog");
    write(docs.path(), ".secret.md", "hedgehog");
    docs
}

#[test]
fn incremental_update_touches_only_what_changed() {
    let docs = corpus();
    let dir = tempfile::tempdir().unwrap();
    let mut index = Index::open_or_create(dir.path()).unwrap();
    let cfg = IndexConfig::default();

    let mut seen = Vec::new();
    let first = index
        .update(docs.path(), &cfg, &mut |p| {
            seen.push((p.done, p.total, p.path.to_owned()))
        })
        .unwrap();
    assert_eq!(
        seen,
        [
            (1, 3, "a.md".to_owned()),
            (2, 3, "c.txt".to_owned()),
            (3, 3, "sub/b.md".to_owned())
        ]
    );
    assert_eq!(
        (first.added, first.changed, first.removed, first.unchanged),
        (3, 0, 0, 0)
    );
    assert_eq!((first.chunks, first.total_chunks), (4, 4));
    assert!(first.skipped.is_empty(), "{:?}", first.skipped);
    assert_eq!(index.stats().chunks, 4);
    assert_eq!(index.stats().documents, 3);
    assert!(
        ids(&index, "hedgehog").is_empty(),
        "hidden files are indexed"
    );

    // No change: nothing re-added.
    let second = update(&mut index, docs.path(), &cfg);
    assert_eq!(
        (
            second.added,
            second.changed,
            second.removed,
            second.unchanged
        ),
        (0, 0, 0, 3)
    );
    assert_eq!((second.chunks, second.total_chunks), (0, 4));
    assert_eq!(index.stats().chunks, 4);

    // Modify one file: it alone is re-indexed; old text is gone.
    write(docs.path(), "sub/b.md", "# Bravo\n\nBeavers build dams.\n");
    let third = update(&mut index, docs.path(), &cfg);
    assert_eq!(
        (third.added, third.changed, third.removed, third.unchanged),
        (0, 1, 0, 2)
    );
    assert_eq!((third.chunks, third.total_chunks), (1, 3));
    assert_eq!(ids(&index, "beavers dams"), ["sub/b.md#chunk-1"]);
    assert!(ids(&index, "badgers worms").is_empty());
    assert_eq!(index.stats().chunks, 3);

    // Delete a file: its chunks are gone.
    fs::remove_file(docs.path().join("a.md")).unwrap();
    let fourth = update(&mut index, docs.path(), &cfg);
    assert_eq!(
        (
            fourth.added,
            fourth.changed,
            fourth.removed,
            fourth.unchanged
        ),
        (0, 0, 1, 2)
    );
    assert!(ids(&index, "aardvark").is_empty());
    assert!(index.get("a.md#chunk-1").unwrap().is_none());
    assert_eq!(index.stats().chunks, 2);

    // A new file is added.
    write(docs.path(), "d.markdown", "# Delta\n\nDolphins.");
    let fifth = update(&mut index, docs.path(), &cfg);
    assert_eq!((fifth.added, fifth.unchanged), (1, 2));

    // Reopening keeps the manifest: still nothing to do.
    drop(index);
    let mut index = Index::open_or_create(dir.path()).unwrap();
    let sixth = update(&mut index, docs.path(), &cfg);
    assert_eq!((sixth.unchanged, sixth.chunks), (3, 0));
    assert_eq!(ids(&index, "dolphins"), ["d.markdown#chunk-1"]);
}

#[test]
fn config_change_reindexes_everything() {
    let docs = corpus();
    let dir = tempfile::tempdir().unwrap();
    let mut index = Index::open_or_create(dir.path()).unwrap();
    update(&mut index, docs.path(), &IndexConfig::default());

    let small = IndexConfig {
        chunker: ChunkerConfig {
            max_chars: 30,
            overlap_chars: 5,
        },
        base_url: None,
    };
    let report = update(&mut index, docs.path(), &small);
    assert_eq!((report.added, report.changed, report.unchanged), (0, 3, 0));
    assert!(report.total_chunks > 4);
    assert_eq!(index.stats().chunks, report.total_chunks);

    let with_url = IndexConfig {
        base_url: Some("https://help.example.com/kb".into()),
        ..small.clone()
    };
    let report = update(&mut index, docs.path(), &with_url);
    assert_eq!(report.changed, 3);
    let hit = &index.search("beavers badgers", 1).unwrap()[0];
    assert_eq!(
        hit.source_url.as_deref(),
        Some("https://help.example.com/kb/sub/b.md")
    );
    assert_eq!(update(&mut index, docs.path(), &with_url).unchanged, 3);
}

#[test]
fn chunks_carry_title_url_and_score() {
    let docs = corpus();
    let dir = tempfile::tempdir().unwrap();
    let mut index = Index::open_or_create(dir.path()).unwrap();
    update(&mut index, docs.path(), &IndexConfig::default());

    let hits = index.search("What do badgers eat?", 3).unwrap();
    let top = &hits[0];
    assert_eq!(top.chunk_id, "sub/b.md#chunk-2");
    assert_eq!(top.content, "## Diet\n\nBadgers eat worms.");
    assert_eq!(top.source_title.as_deref(), Some("Bravo"));
    assert_eq!(top.source_url, None);
    assert_eq!(top.page_number, None);
    assert!(top.score.unwrap() > 0.0);
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));

    let caribou = index.search("caribou", 3).unwrap();
    assert_eq!(caribou[0].source_title.as_deref(), Some("c.txt"));

    assert_eq!(
        index.get("sub/b.md#chunk-2").unwrap().unwrap().content,
        "## Diet\n\nBadgers eat worms."
    );
    // Every result is a valid ChunkSet for the verifier.
    groundcite_core::ChunkSet::new(index.search("badgers caribou aardvark", 10).unwrap()).unwrap();
}

#[test]
fn unreadable_documents_are_skipped_not_fatal() {
    let docs = corpus();
    fs::write(docs.path().join("bad.md"), b"# Bad\n\n\xff\xfe broken").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut index = Index::open_or_create(dir.path()).unwrap();
    let report = update(&mut index, docs.path(), &IndexConfig::default());
    assert_eq!(report.added, 3);
    assert_eq!(report.skipped.len(), 1, "{:?}", report.skipped);
    assert_eq!(report.skipped[0].0, "bad.md");
    assert!(
        report.skipped[0].1.contains("UTF-8"),
        "{}",
        report.skipped[0].1
    );

    // A previously indexed file that turns bad loses its chunks.
    fs::write(docs.path().join("a.md"), b"\xc3\x28").unwrap();
    let report = update(&mut index, docs.path(), &IndexConfig::default());
    assert_eq!((report.removed, report.skipped.len()), (1, 2));
    assert!(ids(&index, "aardvark").is_empty());
}

/// Files of kinds the index does not read are counted by extension, so a
/// folder of Org files is not silently an empty corpus; `.mdx` is read as
/// Markdown, its front matter's title naming the document, and AsciiDoc
/// under its document title, with its header and markup left out.
#[test]
fn other_kinds_are_counted_and_mdx_is_read() {
    let docs = tempfile::tempdir().unwrap();
    write(docs.path(), "guide/setup.org", "* Setup\n\nRun it.\n");
    write(docs.path(), "guide/faq.org", "* FAQ\n");
    write(docs.path(), "Makefile", "all:\n");
    write(docs.path(), "logo.PNG", "x");
    write(docs.path(), ".hidden.org", "x");
    let dir = tempfile::tempdir().unwrap();
    let mut index = Index::open_or_create(dir.path()).unwrap();
    let report = update(&mut index, docs.path(), &IndexConfig::default());
    assert_eq!((report.added, report.total_chunks), (0, 0));
    let kinds: Vec<(&str, usize)> = report
        .other_kinds
        .iter()
        .map(|(k, n)| (k.as_str(), *n))
        .collect();
    assert_eq!(kinds, [(".org", 2), (".png", 1), ("no extension", 1)]);

    write(
        docs.path(),
        "install.mdx",
        "---\ntitle: Installing the agent\n---\nimport Tabs from '@theme/Tabs';\n\nThe agent installs with one command.\n",
    );
    let report = update(&mut index, docs.path(), &IndexConfig::default());
    assert_eq!((report.added, report.total_chunks), (1, 1));
    let hits = index.search("agent installs", 5).unwrap();
    assert_eq!(hits[0].chunk_id, "install.mdx#chunk-1");
    assert_eq!(hits[0].content, "The agent installs with one command.");
    assert_eq!(
        hits[0].source_title.as_deref(),
        Some("Installing the agent")
    );
    write(
        docs.path(),
        "api/auth.rst",
        "Authentication\n==============\n\n.. note::\n\n   Tokens expire after one hour.\n",
    );
    let report = update(&mut index, docs.path(), &IndexConfig::default());
    assert_eq!((report.added, report.total_chunks), (1, 2));
    assert_eq!(report.other_kinds.get(".org"), Some(&2));
    let hits = index.search("tokens expire", 5).unwrap();
    assert_eq!(hits[0].chunk_id, "api/auth.rst#chunk-1");
    assert_eq!(hits[0].source_title.as_deref(), Some("Authentication"));

    write(
        docs.path(),
        "admin/backup.adoc",
        "= Backing Up the Server\nOps Team <ops@example.com>\n:toc: left\n\n// internal: check with legal\n[NOTE]\n.Schedule\nSnapshots run nightly at 02:00 UTC.\n\n////\nSnapshots run hourly (draft, not published).\n////\n",
    );
    let report = update(&mut index, docs.path(), &IndexConfig::default());
    assert_eq!(report.added, 1);
    let hits = index.search("snapshots nightly", 5).unwrap();
    assert_eq!(hits[0].chunk_id, "admin/backup.adoc#chunk-1");
    assert_eq!(
        hits[0].source_title.as_deref(),
        Some("Backing Up the Server")
    );
    // A comment block is in no chunk, so nothing finds or quotes it.
    assert!(!hits[0].content.contains("hourly"), "{}", hits[0].content);
    let draft = index.search("hourly draft published", 5).unwrap();
    assert!(
        draft.iter().all(|h| !h.chunk_id.starts_with("admin/")),
        "{draft:?}"
    );
}

#[cfg(unix)]
#[test]
fn symlinks_are_not_followed() {
    let docs = corpus();
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.md", "# Secret\n\nplatypus");
    std::os::unix::fs::symlink(outside.path(), docs.path().join("link")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.md"),
        docs.path().join("file-link.md"),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut index = Index::open_or_create(dir.path()).unwrap();
    let report = update(&mut index, docs.path(), &IndexConfig::default());
    assert!(ids(&index, "platypus").is_empty());
    let skipped: Vec<&str> = report.skipped.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(skipped, ["file-link.md", "link"]);
}

#[test]
fn nested_index_dir_is_not_indexed() {
    let docs = corpus();
    let index_dir = docs.path().join("index");
    let mut index = Index::open_or_create(&index_dir).unwrap();
    write(&index_dir, "stray.md", "# Stray\n\nzebra");
    let first = update(&mut index, docs.path(), &IndexConfig::default());
    assert_eq!(first.added, 3);
    assert!(ids(&index, "zebra").is_empty());
    let second = update(&mut index, docs.path(), &IndexConfig::default());
    assert_eq!((second.added, second.unchanged), (0, 3));
}

#[test]
fn open_refuses_foreign_directories_and_bad_docs_dirs() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("precious.txt"), "keep me").unwrap();
    let err = Index::open_or_create(dir.path()).unwrap_err();
    assert!(matches!(err.kind(), IndexErrorKind::NotAnIndex { .. }));
    assert!(err.to_string().contains("not empty"), "{err}");

    let empty = tempfile::tempdir().unwrap();
    let mut index = Index::open_or_create(&empty.path().join("new/nested")).unwrap();
    let file = dir.path().join("precious.txt");
    let err = index
        .update(&file, &IndexConfig::default(), &mut |_| {})
        .unwrap_err();
    assert!(matches!(err.kind(), IndexErrorKind::NotADirectory { .. }));
    let missing = dir.path().join("missing");
    let err = index
        .update(&missing, &IndexConfig::default(), &mut |_| {})
        .unwrap_err();
    assert!(err.to_string().contains("missing"), "{err}");
}

#[test]
fn sequential_writers_on_one_directory() {
    let docs = corpus();
    let dir = tempfile::tempdir().unwrap();
    let mut a = Index::open_or_create(dir.path()).unwrap();
    let mut b = Index::open_or_create(dir.path()).unwrap();
    update(&mut a, docs.path(), &IndexConfig::default());
    // Sequential writers are fine; `b`'s manifest is stale, so it rebuilds.
    let report = update(&mut b, docs.path(), &IndexConfig::default());
    assert_eq!(report.changed + report.added, 3);
    assert_eq!(b.stats().chunks, 4);
}

#[test]
fn hostile_queries_never_fail() {
    let docs = corpus();
    let dir = tempfile::tempdir().unwrap();
    let empty_dir = tempfile::tempdir().unwrap();
    let empty = Index::open_or_create(empty_dir.path()).unwrap();
    let mut index = Index::open_or_create(dir.path()).unwrap();
    update(&mut index, docs.path(), &IndexConfig::default());

    let junk: String = (0..10_240)
        .map(|i| ['(', ')', '"', '*', ':', 'x', ' ', '🎉', '\\', '~', '^'][i % 11])
        .collect();
    let words: String = (0..2000).map(|i| format!("w{i} ")).collect();
    let queries = [
        "",
        "   \n\t",
        "foo AND (",
        "title:",
        "content:badgers",
        "*",
        "\"",
        "\"unclosed phrase",
        "🎉🎒",
        "-",
        "+badgers -worms",
        "badgers^100",
        "[a TO z]",
        "the of and to",
        "\0\u{1}\u{feff}",
        junk.as_str(),
        words.as_str(),
    ];
    for q in queries {
        for idx in [&index, &empty] {
            for k in [0, 1, 10, usize::MAX] {
                let hits = idx.search(q, k).unwrap();
                assert!(hits.len() <= k);
            }
        }
    }
    assert!(index.search("", 10).unwrap().is_empty());
    assert!(index.search("badgers", 0).unwrap().is_empty());
    assert!(index.search("the of and", 10).unwrap().is_empty());
    assert_eq!(index.search("content:badgers", 10).unwrap().len(), 2);
    assert_eq!(index.search("badgers", usize::MAX).unwrap().len(), 2);
}

#[test]
fn index_can_be_shared_between_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Index>();
    assert_send_sync::<groundcite_index::IndexError>();
}

/// A deterministic embedder that counts the texts it is asked to embed.
struct Counting(std::sync::atomic::AtomicUsize);

impl groundcite_index::Embed for Counting {
    fn model_id(&self) -> &str {
        "counting-test-model"
    }
    fn dim(&self) -> usize {
        2
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, groundcite_index::EmbedFailure> {
        self.0
            .fetch_add(texts.len(), std::sync::atomic::Ordering::SeqCst);
        Ok(texts
            .iter()
            .map(|t| {
                let a = t.len() as f32;
                let n = (a * a + 1.0).sqrt();
                vec![a / n, 1.0 / n]
            })
            .collect())
    }
}

#[test]
fn bm25_alone_keeps_the_vectors_and_the_model_embeds_only_what_changed() {
    let docs = corpus();
    let idx = tempfile::tempdir().unwrap();
    let cfg = IndexConfig::default();
    let embed = Counting(Default::default());
    let embedded = || embed.0.load(std::sync::atomic::Ordering::SeqCst);
    let vectors = |i: &Index| i.stats().sentence_vectors;
    let mut index = Index::open_or_create(idx.path()).unwrap();
    index
        .update_with(docs.path(), &cfg, Some(&embed), &mut |_| {})
        .unwrap();
    let all = vectors(&index);
    assert!(all > 0 && embedded() == all, "{all} {}", embedded());

    // BM25 alone (`--retrieval bm25`) over unchanged documents: the vectors
    // stay, on disk too, and the next run with the model embeds nothing.
    update(&mut index, docs.path(), &cfg);
    assert_eq!(vectors(&index), all);
    let mut index = Index::open_or_create(idx.path()).unwrap();
    assert_eq!(vectors(&index), all);
    index
        .update_with(docs.path(), &cfg, Some(&embed), &mut |_| {})
        .unwrap();
    assert_eq!(embedded(), all, "re-embedded after a BM25-only update");

    // A file changed under BM25 alone loses its own vectors only; the next
    // run with the model embeds that file and nothing else.
    write(
        docs.path(),
        "a.md",
        "# Alpha\n\nThe aardvark sleeps all night.\n",
    );
    update(&mut index, docs.path(), &cfg);
    assert_eq!(vectors(&index), all - 1);
    let mut index = Index::open_or_create(idx.path()).unwrap();
    assert_eq!(vectors(&index), all - 1);
    index
        .update_with(docs.path(), &cfg, Some(&embed), &mut |_| {})
        .unwrap();
    assert_eq!(embedded(), all + 1);
    assert_eq!(vectors(&index), all);
}
