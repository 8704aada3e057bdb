//! `groundcite eval`: the seed's verification suite. Every case goes
//! through the whole pipeline (`groundcite_ask`: retrieve, gate, generate,
//! verify) with the configured provider; `groundcite_eval` scores the runs,
//! checks the thresholds and writes the JSON result and the HTML report.
//!
//! Exit codes: 0 when every threshold passed (or none was set), 4 when a
//! threshold failed, 2 for a bad suite or setting, 1 for anything else
//! (an unreachable provider stops the run: a suite measured against a
//! provider that is down measures nothing).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use groundcite_app::eval::{Corpus, EvalPlan, run_suite, suite_settings};
use groundcite_app::{ProcessEnv, ProviderFlags, RetrievalFlags, Settings, ask, config};
use groundcite_eval::{EvalResult, Suite, compare, parse_threshold, report, summary};
use groundcite_index::{Index, IndexConfig};

use crate::input::{self, BadInput};

/// Largest suite file read.
const MAX_SUITE_BYTES: u64 = 16 << 20;

/// Largest result file read for `--compare`.
const MAX_RESULT_BYTES: u64 = 512 << 20;

#[derive(Debug, clap::Args)]
pub struct EvalArgs {
    /// The suite: a TOML or JSON file (schemas/eval-suite.schema.json).
    suite: PathBuf,
    /// Runs per case (1 to 100); rates are over all runs.
    #[arg(long, value_name = "N", default_value_t = 1)]
    repeat: u32,
    /// Where to write results.json and report.html (created if needed).
    #[arg(long, value_name = "DIR", default_value = "eval-out")]
    out: PathBuf,
    /// An earlier results.json to compare with (prompt or model change).
    #[arg(long, value_name = "OLD.json")]
    compare: Option<PathBuf>,
    /// A gate, added to the suite's (and replacing the suite's bound on the
    /// same metric): `METRIC>=MIN`, `METRIC<=MAX` or `METRIC=MIN..MAX`.
    /// Repeatable.
    #[arg(long = "threshold", value_name = "GATE")]
    thresholds: Vec<String>,
    /// Where the corpus's index lives (docs corpora; default: the
    /// directory `ask` uses for that folder).
    #[arg(long, value_name = "DIR")]
    index: Option<String>,
    /// Index this folder instead of the suite's `corpus.docs` (a docs
    /// suite's questions over another edition of the same documents: a new
    /// export, a re-wrapped copy). Relative to the working directory.
    #[arg(long, value_name = "DIR")]
    docs: Option<PathBuf>,
    /// No progress bar, even on a terminal.
    #[arg(long)]
    no_progress: bool,
    /// Retrieve and rank only; no model is asked (every case answers
    /// unanswerable). Only retrieval_recall and candidate_recall mean
    /// anything then: for tuning retrieval fast.
    #[arg(long)]
    retrieval_only: bool,
    #[command(flatten)]
    r: RetrievalFlags,
    #[command(flatten)]
    p: ProviderFlags,
}

fn read_limited(path: &Path, limit: u64, what: &str) -> Result<String, BadInput> {
    let name = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| BadInput::new(&name, e.to_string()))?;
    if !meta.is_file() {
        return Err(BadInput::new(&name, format!("is not a {what} file")));
    }
    if meta.len() > limit {
        return Err(BadInput::new(
            &name,
            format!("is larger than {} MiB", limit >> 20),
        ));
    }
    input::read_text(&name)
}

pub fn run(args: EvalArgs) -> anyhow::Result<ExitCode> {
    if !(1..=100).contains(&args.repeat) {
        return Err(BadInput::new("--repeat", "must be between 1 and 100").into());
    }
    let suite_name = args.suite.display().to_string();
    let text = read_limited(&args.suite, MAX_SUITE_BYTES, "suite")?;
    let is_json = args
        .suite
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let mut suite = if is_json {
        Suite::from_json(&text)
    } else {
        Suite::from_toml(&text)
    }
    .map_err(|e| BadInput::new(&suite_name, e.to_string()))?;
    for expr in &args.thresholds {
        let (name, bound) =
            parse_threshold(expr).map_err(|e| BadInput::new("--threshold", e.to_string()))?;
        suite.thresholds.insert(name, bound);
    }
    // Read the old result first: a typo should not cost a whole run.
    let old = match &args.compare {
        Some(p) => {
            let text = read_limited(p, MAX_RESULT_BYTES, "result")?;
            Some(
                EvalResult::from_json(&text)
                    .map_err(|e| BadInput::new(&p.display().to_string(), e.to_string()))?,
            )
        }
        None => None,
    };
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;

    let (file, _) = config::load(args.p.config.as_deref(), &ProcessEnv)?;
    if let Some(d) = &args.docs {
        if suite.corpus.docs.is_none() {
            return Err(BadInput::new(
                "--docs",
                format!("replaces a docs corpus; {suite_name} reads chunks from a file"),
            )
            .into());
        }
        let abs = std::path::absolute(d)
            .map_err(|e| BadInput::new("--docs", format!("{}: {e}", d.display())))?;
        let abs = abs
            .to_str()
            .ok_or_else(|| BadInput::new("--docs", "the path is not valid UTF-8"))?;
        suite.corpus.docs = Some(abs.to_string());
    }
    let base = args.suite.parent().unwrap_or(Path::new("."));
    let resolve = |p: &str| {
        let p = PathBuf::from(p);
        if p.is_absolute() { p } else { base.join(p) }
    };
    let resolver = Settings::new(&args.p, &file, &ProcessEnv);
    let provider = resolver.provider()?;
    let (settings, r) = suite_settings(&args.r, &suite, &suite_name, &file, provider)?;
    let external = groundcite_app::retriever::external(&r, &file.retriever, &ProcessEnv)?;
    let embed = match (&suite.corpus.docs, &external) {
        (Some(_), _) | (_, Some(_)) => crate::progress::embedder(&r, &file)?,
        _ => None,
    };
    let (corpus, corpus_label) = match (&suite.corpus.docs, &suite.corpus.chunks) {
        // A search service replaces the suite's corpus.
        _ if external.is_some() => match external {
            Some(ext) => {
                let label = format!("retriever:{}", ext.name());
                if let Some(i) = suite.cases.iter().position(|c| !c.evidence.is_empty()) {
                    return Err(BadInput::new(
                        &suite_name,
                        format!(
                            "cases[{i}].evidence: evidence sentences are found in the corpus's chunks, which a search service does not list; with --retriever, name gold_chunks by ID"
                        ),
                    )
                    .into());
                }
                (Corpus::External(ext), label)
            }
            None => return Err(BadInput::new("corpus", "no retriever").into()),
        },
        (Some(docs), _) => {
            let docs = resolve(docs);
            if !docs.is_dir() {
                // Named after where the path came from; `{:?}` escapes
                // control characters a path may hold.
                let (source, what) = match &args.docs {
                    Some(_) => ("--docs".to_string(), String::new()),
                    None => (suite_name.clone(), "corpus.docs: ".to_string()),
                };
                return Err(
                    BadInput::new(&source, format!("{what}{docs:?} is not a directory")).into(),
                );
            }
            let dir = match &args.index {
                Some(d) => PathBuf::from(d),
                None => ask::default_index_dir(&docs, &ProcessEnv)?,
            };
            let mut index = Index::open_or_create(&dir)?;
            let cfg = IndexConfig {
                base_url: suite.corpus.base_url.clone(),
                ..IndexConfig::default()
            };
            crate::progress::update_index(&mut index, &docs, &cfg, embed.as_deref(), true)?;
            (Corpus::Index(Box::new(index)), docs.display().to_string())
        }
        (None, Some(chunks)) => {
            let path = resolve(chunks).display().to_string();
            (Corpus::Chunks(input::read_chunks(&path)?), path)
        }
        // Suite::validate guarantees one of docs or chunks.
        (None, None) => return Err(BadInput::new("corpus", "set docs or chunks").into()),
    };
    // Evidence sentences name their gold chunks through the corpus itself.
    suite
        .resolve_evidence(&corpus.all_chunks()?)
        .map_err(|e| BadInput::new(&suite_name, e.to_string()))?;

    let backend = resolver.backend(provider)?;
    let total = suite.cases.len() as u64 * u64::from(args.repeat);
    let bar = progress(total, args.no_progress);
    let plan = EvalPlan {
        suite: &suite,
        suite_path: suite_name,
        corpus: &corpus,
        corpus_label,
        embed: embed.as_deref(),
        backend: &backend,
        settings: &settings,
        repeat: args.repeat,
        retrieval_only: args.retrieval_only,
    };
    let result = run_suite(
        &plan,
        &mut |case_id| bar.set_message(case_id.to_string()),
        &mut |done| {
            if bar.is_hidden() {
                eprintln!(
                    "eval: {}/{} {} {} ({:.0} ms)",
                    done.done,
                    done.total,
                    done.case_id,
                    done.outcome(),
                    done.run.latency_ms
                );
            }
            bar.inc(1);
        },
    )?;
    bar.finish_and_clear();

    let comparison = old.as_ref().map(|o| compare(o, &result));
    let results_path = args.out.join("results.json");
    let report_path = args.out.join("report.html");
    let json = serde_json::to_vec_pretty(&result)?;
    std::fs::write(&results_path, json)
        .with_context(|| format!("writing {}", results_path.display()))?;
    std::fs::write(&report_path, report::html(&result, comparison.as_ref()))
        .with_context(|| format!("writing {}", report_path.display()))?;

    let mut out = std::io::stdout().lock();
    out.write_all(summary::text(&result, comparison.as_ref()).as_bytes())?;
    writeln!(
        out,
        "results: {}\nreport:  {}",
        results_path.display(),
        report_path.display()
    )?;
    out.flush()?;
    Ok(if result.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(4)
    })
}

fn progress(total: u64, off: bool) -> indicatif::ProgressBar {
    if off || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template("eval {bar:40} {pos}/{len} {elapsed} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}
