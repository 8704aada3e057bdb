//! `groundcite index DIR`: build or refresh the embedded BM25 index of a
//! docs folder (only changed files are re-read).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use groundcite_index::{ChunkerConfig, Embed, Index, IndexConfig, UpdateReport};

use crate::config;
use crate::input::BadInput;
use crate::retrieval_args::{self, RetrievalArgs};

#[derive(Debug, clap::Args)]
pub struct IndexArgs {
    /// Folder of Markdown (.md, .markdown) and text (.txt) documents.
    docs: String,
    /// Where the index lives (default: the directory `ask` uses for this
    /// docs folder).
    #[arg(long, value_name = "DIR")]
    index: Option<String>,
    /// Base URL of the documents: a chunk's `source_url` is this URL + the
    /// document's path (else `[ask] base_url`; none: `source_url` is null).
    #[arg(long, value_name = "URL")]
    source_base_url: Option<String>,
    /// Largest chunk, in characters.
    #[arg(long, value_name = "N")]
    max_chars: Option<usize>,
    /// Characters shared by consecutive pieces of a split paragraph.
    #[arg(long, value_name = "N")]
    overlap: Option<usize>,
    /// Configuration file (default: ./groundcite.toml if it exists).
    #[arg(long, value_name = "FILE")]
    config: Option<String>,
    /// `hybrid` (default) also embeds every sentence for dense retrieval
    /// (when the embedding model is installed); `bm25` does not.
    #[arg(long, value_enum)]
    retrieval: Option<retrieval_args::RetrievalMode>,
    /// The sentence-embedding model's folder (see `groundcite ask --help`).
    #[arg(long, value_name = "DIR")]
    embed_model: Option<String>,
}

pub fn run(args: IndexArgs) -> anyhow::Result<ExitCode> {
    let (file, _) = config::load(args.config.as_deref())?;
    let docs = PathBuf::from(&args.docs);
    if !docs.is_dir() {
        return Err(BadInput::new(&args.docs, "is not a directory").into());
    }
    let mut chunker = ChunkerConfig::default();
    if let Some(n) = args.max_chars {
        if n < 100 {
            return Err(BadInput::new("--max-chars", "must be at least 100").into());
        }
        chunker.max_chars = n;
    }
    if let Some(n) = args.overlap {
        if n >= chunker.max_chars / 2 {
            return Err(BadInput::new("--overlap", "must be less than half of --max-chars").into());
        }
        chunker.overlap_chars = n;
    }
    let cfg = IndexConfig {
        chunker,
        base_url: args
            .source_base_url
            .clone()
            .or_else(|| file.ask.base_url.clone()),
    };
    let index_dir = match args.index.clone().or_else(|| file.ask.index.clone()) {
        Some(d) => PathBuf::from(d),
        None => crate::ask_cmd::default_index_dir(&docs)?,
    };
    let embed = retrieval_args::embedder(
        &RetrievalArgs {
            retrieval: args.retrieval,
            embed_model: args.embed_model.clone(),
            ..RetrievalArgs::default()
        },
        &file,
    )?;
    let mut index = Index::open_or_create(&index_dir)?;
    let report = update_with_progress(&mut index, &docs, &cfg, embed.as_deref(), false)?;
    let stats = index.stats();
    println!(
        "{}: {} added, {} changed, {} removed, {} unchanged; {} chunks written, {} in the index, {} sentence vectors ({})",
        docs.display(),
        report.added,
        report.changed,
        report.removed,
        report.unchanged,
        report.chunks,
        report.total_chunks,
        stats.sentence_vectors,
        index_dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Updates `index` from `docs`, with a progress bar on a terminal when there
/// are many files, and a line per skipped file on stderr. `quiet_when_unchanged`
/// keeps `ask` silent when nothing changed.
pub fn update_with_progress(
    index: &mut Index,
    docs: &Path,
    cfg: &IndexConfig,
    embed: Option<&dyn Embed>,
    quiet_when_unchanged: bool,
) -> anyhow::Result<UpdateReport> {
    let bar = indicatif::ProgressBar::hidden();
    let show = std::io::stderr().is_terminal();
    // Embedding makes even a small folder take seconds: show the bar then.
    let at_least = if embed.is_some() { 1 } else { 50 };
    let report = index.update_with(docs, cfg, embed, &mut |p| {
        if show && p.total >= at_least && bar.is_hidden() {
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            bar.set_length(p.total as u64);
            bar.set_style(
                indicatif::ProgressStyle::with_template("indexing {bar:40} {pos}/{len} {msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
        }
        bar.set_position(p.done as u64);
        bar.set_message(p.path.to_string());
    })?;
    bar.finish_and_clear();
    for (path, reason) in &report.skipped {
        eprintln!("note: skipped {path}: {reason}");
    }
    let touched = report.added + report.changed + report.removed;
    if touched > 0 && quiet_when_unchanged {
        eprintln!(
            "indexed {}: {} added, {} changed, {} removed ({} chunks)",
            docs.display(),
            report.added,
            report.changed,
            report.removed,
            report.total_chunks
        );
    }
    Ok(report)
}
