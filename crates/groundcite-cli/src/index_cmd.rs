//! `groundcite index DIR`: build or refresh the embedded BM25 index of a
//! docs folder (only changed files are re-read).

use std::path::PathBuf;
use std::process::ExitCode;

use groundcite_app::{ProcessEnv, RetrievalFlags, RetrievalMode, ask, config};
use groundcite_index::{ChunkerConfig, Index, IndexConfig};

use crate::input::BadInput;

#[derive(Debug, clap::Args)]
pub struct IndexArgs {
    /// Folder of documents: Markdown (.md, .markdown, .mdx),
    /// reStructuredText (.rst), AsciiDoc (.adoc), text (.txt), PDF, HTML
    /// (.html, .htm, .xhtml), DOCX, ODT and EPUB.
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
    /// Configuration file (else ./groundcite.toml, else groundcite.toml in
    /// the user configuration directory).
    #[arg(long, value_name = "FILE", env = "GROUNDCITE_CONFIG")]
    config: Option<String>,
    /// `hybrid` (default) also embeds every sentence for dense retrieval
    /// (when the embedding model is installed); `bm25` does not.
    #[arg(long, value_enum)]
    retrieval: Option<RetrievalMode>,
    /// The sentence-embedding model's folder (see `groundcite ask --help`).
    #[arg(long, value_name = "DIR", env = "GROUNDCITE_EMBED_MODEL")]
    embed_model: Option<String>,
}

pub fn run(args: IndexArgs) -> anyhow::Result<ExitCode> {
    let (file, _) = config::load(args.config.as_deref(), &ProcessEnv)?;
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
    let index_dir = ask::index_dir(args.index.as_deref(), &file, &docs, &ProcessEnv)?;
    let embed = crate::progress::embedder(
        &RetrievalFlags {
            retrieval: args.retrieval,
            embed_model: args.embed_model.clone(),
            ..RetrievalFlags::default()
        },
        &file,
    )?;
    let mut index = Index::open_or_create(&index_dir)?;
    let report = crate::progress::update_index(&mut index, &docs, &cfg, embed.as_deref(), false)?;
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
