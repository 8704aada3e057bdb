//! Where each case's gold chunks rank, per retrieval stage: BM25 alone,
//! dense alone (a chunk's best sentence), the two fused by reciprocal rank,
//! and the chunks `retrieve` hands the model. For finding out why a suite's
//! retrieval recall is what it is, over an index `ask` or `eval` built.
//!
//! ```sh
//! cargo run --release -p groundcite-app --example retrieval_ranks -- SUITE INDEX_DIR [TOP_K]
//! ```
//!
//! Prints one line per answerable case (`-` where the gold chunk is not in
//! the first 500), then recall at 3, 5, 8 and 20 for each stage. With
//! `--dump FILE`, also writes one JSON line per case and chunk of the union
//! of the first 100 of BM25 and of dense (their scores and ranks, the
//! chunk's sentence cosines, the cosine of its title and headings, whether
//! it is gold): the features to try a chunk ranking on, outside Rust.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::collections::BTreeMap;
use std::path::Path;

use groundcite_ask::{AskSettings, GateMode, retrieve};
use groundcite_eval::Suite;
use groundcite_index::Index;

const DEPTH: usize = 500;

/// The best (lowest) rank of any chunk of any gold group, 1-based; a case
/// with several groups takes the worst group (every group must be found).
fn rank_of(gold: &[Vec<String>], list: &[String]) -> Option<usize> {
    let mut worst = 0;
    for group in gold {
        let r = list.iter().position(|id| group.contains(id))? + 1;
        worst = worst.max(r);
    }
    Some(worst)
}

/// One JSON line per chunk of the union of the first 100 of BM25 and
/// dense, for `case`.
fn write_features(
    out: &mut impl std::io::Write,
    index: &Index,
    embed: &dyn groundcite_index::Embed,
    context_vectors: &mut BTreeMap<String, Vec<f32>>,
    case: &str,
    gold: &[Vec<String>],
    (bm25, bm25_scores, dense, v): (&[String], &[f64], &[String], &[f32]),
) {
    let mut ids: Vec<&String> = bm25.iter().take(100).collect();
    for id in dense.iter().take(100) {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    for id in ids {
        let sims: Vec<f32> = index
            .sentences_of(id, Some(v))
            .iter()
            .filter_map(|h| h.similarity)
            .collect();
        let context = index.context_of(id).unwrap_or_default();
        let cv = context_vectors
            .entry(context.clone())
            .or_insert_with(|| embed.embed(&[context.as_str()]).unwrap().pop().unwrap());
        let ctx_cos: f32 = cv.iter().zip(v).map(|(a, b)| a * b).sum();
        let line = serde_json::json!({
            "case": case,
            "chunk": id,
            "gold": gold.iter().any(|g| g.contains(id)),
            "bm25_rank": bm25.iter().position(|x| x == id).map(|r| r + 1),
            "bm25": bm25.iter().position(|x| x == id).map_or(0.0, |r| bm25_scores[r]),
            "dense_rank": dense.iter().position(|x| x == id).map(|r| r + 1),
            "sims": sims,
            "ctx_cos": ctx_cos,
            "context": context,
        });
        writeln!(out, "{line}").unwrap();
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let suite_path = Path::new(&args[0]);
    let index = Index::open_or_create(Path::new(&args[1])).unwrap();
    let top_k: usize = args
        .get(2)
        .filter(|a| !a.starts_with("--"))
        .map_or(3, |k| k.parse().unwrap());
    let mut dump = args
        .iter()
        .position(|a| a == "--dump")
        .map(|i| std::io::BufWriter::new(std::fs::File::create(&args[i + 1]).unwrap()));
    let mut context_vectors: BTreeMap<String, Vec<f32>> = BTreeMap::new();
    let text = std::fs::read_to_string(suite_path).unwrap();
    let mut suite = Suite::from_toml(&text).unwrap();
    suite
        .resolve_evidence(&index.all_chunks().unwrap())
        .unwrap();
    let embed = groundcite_ask::load_embedder(None)
        .unwrap()
        .expect("no embedding model installed");
    let settings = AskSettings {
        top_k,
        ..AskSettings::with_gate(GateMode::Retrieval)
    };
    let stages = ["bm25", "dense", "fused", "retrieved"];
    let mut ranks: BTreeMap<&str, Vec<Option<usize>>> = BTreeMap::new();
    for case in suite.cases.iter().filter(|c| c.kind.expects_answer()) {
        let gold = case.gold();
        // Searched as the pipeline searches it: misspelt words corrected.
        let corrected = index.correct_spelling(&case.question).unwrap();
        let q = corrected.text.as_str();
        let v = groundcite_index::Embed::embed(embed.as_ref(), &[q])
            .unwrap()
            .pop()
            .unwrap();
        let hits = index.search(q, DEPTH).unwrap();
        let bm25_scores: Vec<f64> = hits.iter().map(|c| c.score.unwrap_or(0.0)).collect();
        let bm25: Vec<String> = hits.into_iter().map(|c| c.chunk_id).collect();
        let dense: Vec<String> = index
            .dense_search(&v, DEPTH)
            .into_iter()
            .map(|d| d.0)
            .collect();
        let mut fused: BTreeMap<&str, f64> = BTreeMap::new();
        for list in [&bm25, &dense] {
            for (r, id) in list.iter().enumerate() {
                *fused.entry(id.as_str()).or_default() += 1.0 / (61.0 + r as f64);
            }
        }
        let mut fused: Vec<(&str, f64)> = fused.into_iter().collect();
        fused.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        let fused: Vec<String> = fused.into_iter().map(|f| f.0.to_string()).collect();
        if let Some(out) = dump.as_mut() {
            write_features(
                out,
                &index,
                embed.as_ref(),
                &mut context_vectors,
                &case.id,
                &gold,
                (&bm25, &bm25_scores, &dense, &v),
            );
        }
        let got = retrieve(&index, Some(embed.as_ref()), &case.question, &settings).unwrap();
        let retrieved: Vec<String> = got
            .chunks
            .chunks()
            .iter()
            .map(|c| c.chunk_id.clone())
            .collect();
        let row = [
            rank_of(&gold, &bm25),
            rank_of(&gold, &dense),
            rank_of(&gold, &fused),
            rank_of(&gold, &retrieved),
        ];
        let show = |r: Option<usize>| r.map_or("-".to_string(), |r| r.to_string());
        println!(
            "{:<28} bm25 {:>4} dense {:>4} fused {:>4} got {:>2}  {}",
            case.id,
            show(row[0]),
            show(row[1]),
            show(row[2]),
            show(row[3]),
            gold.iter()
                .map(|g| g.first().cloned().unwrap_or_default())
                .collect::<Vec<_>>()
                .join(" ")
        );
        for (s, r) in stages.iter().zip(row) {
            ranks.entry(s).or_default().push(r);
        }
    }
    for s in stages {
        let rs = &ranks[s];
        let at = |k: usize| {
            rs.iter().filter(|r| r.is_some_and(|r| r <= k)).count() as f64 / rs.len() as f64
        };
        println!(
            "{s:<10} @3 {:.2}  @5 {:.2}  @8 {:.2}  @20 {:.2}  @100 {:.2}",
            at(3),
            at(5),
            at(8),
            at(20),
            at(100)
        );
    }
}
