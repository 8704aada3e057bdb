//! Bringing an index up to date with a progress bar on a terminal (`ask`,
//! `eval`, `index` and `serve` all do it before they answer).

use std::io::IsTerminal;
use std::path::Path;

use groundcite_index::{Embed, Index, IndexConfig, UpdateReport};

/// A first index of at least this many files says, without a terminal,
/// that it will take a while.
const FIRST_INDEX_NOTE_FILES: usize = 20;

/// Updates `index` from `docs`, with a progress bar on a terminal when there
/// are many files, and a line per skipped file on stderr. `quiet_when_unchanged`
/// keeps `ask` silent when nothing changed.
pub fn update_index(
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
    // Without a terminal (a script, a service unit) a first index of a
    // large folder is minutes of silence: say so once, before it starts.
    let mut announce = !show && embed.is_some() && index.stats().documents == 0;
    let report = index.update_with(docs, cfg, embed, &mut |p| {
        if announce && p.total >= FIRST_INDEX_NOTE_FILES {
            eprintln!(
                "note: indexing {} files in {} for the first time: every sentence is embedded, \
                 which takes minutes for a large folder (about 90 sentences a second on 2 cores); \
                 later runs re-read only the files that changed",
                p.total,
                docs.display()
            );
        }
        announce = false;
        if show && p.total >= at_least && bar.is_hidden() {
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            bar.set_length(p.total as u64);
            bar.set_style(
                // A first index of a large folder takes minutes (embedding):
                // say how long so far and roughly how long is left.
                indicatif::ProgressStyle::with_template(
                    "indexing {bar:40} {pos}/{len} files, {elapsed} so far, about {eta} left {msg}",
                )
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
    if report.total_chunks == 0 {
        // An empty index refuses every question: say why before it does.
        eprintln!(
            "warning: {} holds no text groundcite can index, so every question will be refused. \
             It reads Markdown (.md, .markdown, .mdx), reStructuredText (.rst), AsciiDoc (.adoc), text (.txt), PDF, HTML (.html, .htm, .xhtml), DOCX, ODT and EPUB{}",
            docs.display(),
            match other_kinds(&report) {
                Some(kinds) => format!("; this folder holds {kinds}."),
                None => "; this folder holds no such file.".to_string(),
            }
        );
    } else if let Some(kinds) = other_kinds(&report)
        && (touched > 0 || !quiet_when_unchanged)
    {
        eprintln!("note: left out files of other kinds: {kinds}");
    }
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

/// The files of kinds the index does not read, as "3 .adoc, 1 .png"
/// (the six commonest, then how many more); `None` when there are none.
fn other_kinds(report: &UpdateReport) -> Option<String> {
    let mut kinds: Vec<(&String, &usize)> = report.other_kinds.iter().collect();
    if kinds.is_empty() {
        return None;
    }
    kinds.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    let mut out: Vec<String> = kinds
        .iter()
        .take(6)
        .map(|(kind, n)| format!("{n} {kind}"))
        .collect();
    if kinds.len() > 6 {
        let rest: usize = kinds[6..].iter().map(|(_, n)| **n).sum();
        out.push(format!("{rest} of other kinds"));
    }
    Some(out.join(", "))
}

/// The embedding model (hybrid retrieval), or `None` with its one-line note
/// on stderr when none is installed.
pub fn embedder(
    flags: &groundcite_app::RetrievalFlags,
    file: &groundcite_app::FileConfig,
) -> Result<Option<std::sync::Arc<dyn Embed>>, groundcite_app::SettingsError> {
    let e = groundcite_app::ask::embedder(flags, file, &groundcite_app::ProcessEnv)?;
    if let Some(note) = e.note {
        eprintln!("note: {note}");
    }
    Ok(e.model)
}
