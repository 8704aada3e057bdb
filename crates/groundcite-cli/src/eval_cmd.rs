//! `groundcite eval`: the seed's verification suite. Every case goes
//! through the whole pipeline (`groundcite_ask`: retrieve, gate, generate,
//! verify) with the configured provider; `groundcite_eval` scores the runs,
//! checks the thresholds and writes the JSON result and the HTML report.
//!
//! Exit codes: 0 when every threshold passed (or none was set), 4 when a
//! threshold failed, 2 for a bad suite or setting, 1 for anything else
//! (an unreachable provider stops the run: a suite measured against a
//! provider that is down measures nothing).

use std::collections::BTreeSet;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use groundcite_ask::{AskError, AskSettings, Retrieval};
use groundcite_core::{AnswerForm, ChunkSet, Contract, Provenance, RefusalCode, WarningCode};
use groundcite_eval::{
    CaseRun, EvalResult, HallucinationCheck, RESULT_FORMAT, Suite, check_thresholds, compare,
    hallucination_check, parse_threshold, report, score, summary,
};
use groundcite_index::{Embed, Index, IndexConfig};
use groundcite_providers::pipeline::{AnswerError, Backend};
use serde_json::json;

use crate::answer_cmd::{self, ProviderArgs};
use crate::config;
use crate::input::{self, BadInput};
use crate::retrieval_args::{self, RetrievalArgs};

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
    /// No progress bar, even on a terminal.
    #[arg(long)]
    no_progress: bool,
    /// Retrieve and rank only; no model is asked (every case answers
    /// unanswerable). Only retrieval_recall and candidate_recall mean
    /// anything then: for tuning retrieval fast.
    #[arg(long)]
    retrieval_only: bool,
    #[command(flatten)]
    r: RetrievalArgs,
    #[command(flatten)]
    p: ProviderArgs,
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

/// Where the answers come from.
enum Source {
    Index(Box<Index>),
    Chunks(ChunkSet),
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

    let (file, _) = config::load(args.p.config.as_deref())?;
    let base = args.suite.parent().unwrap_or(Path::new("."));
    let resolve = |p: &str| {
        let p = PathBuf::from(p);
        if p.is_absolute() { p } else { base.join(p) }
    };
    let provider = answer_cmd::choose_provider(&args.p, &file)?;
    // Flags > the suite's [settings] > groundcite.toml > the provider's default.
    let mut r = args.r.clone();
    r.top_k = r.top_k.or(suite.settings.top_k);
    r.candidates = r.candidates.or(suite.settings.candidates);
    if r.gate.is_none()
        && let Some(g) = &suite.settings.gate
    {
        r.gate = Some(
            g.parse()
                .map_err(|e: String| BadInput::new(&suite_name, e))?,
        );
    }
    let mut settings = retrieval_args::ask_settings(&r, &file, provider)?;
    settings.profile = suite.settings.profile.unwrap_or_default();
    settings.policy = suite.settings.claims.unwrap_or_default();
    let embed = match &suite.corpus.docs {
        Some(_) => retrieval_args::embedder(&r, &file)?,
        None => None,
    };
    let (source, corpus_label) = match (&suite.corpus.docs, &suite.corpus.chunks) {
        (Some(docs), _) => {
            let docs = resolve(docs);
            if !docs.is_dir() {
                return Err(BadInput::new(
                    &suite_name,
                    format!("corpus.docs: {} is not a directory", docs.display()),
                )
                .into());
            }
            let dir = match &args.index {
                Some(d) => PathBuf::from(d),
                None => crate::ask_cmd::default_index_dir(&docs)?,
            };
            let mut index = Index::open_or_create(&dir)?;
            let cfg = IndexConfig {
                base_url: suite.corpus.base_url.clone(),
                ..IndexConfig::default()
            };
            crate::index_cmd::update_with_progress(
                &mut index,
                &docs,
                &cfg,
                embed.as_deref(),
                true,
            )?;
            (Source::Index(Box::new(index)), docs.display().to_string())
        }
        (None, Some(chunks)) => {
            let path = resolve(chunks).display().to_string();
            (Source::Chunks(input::read_chunks(&path)?), path)
        }
        (None, None) => unreachable_corpus()?,
    };
    // Evidence sentences name their gold chunks through the corpus itself.
    let all_chunks = match &source {
        Source::Index(index) => index.all_chunks()?,
        Source::Chunks(set) => set.chunks().to_vec(),
    };
    suite
        .resolve_evidence(&all_chunks)
        .map_err(|e| BadInput::new(&suite_name, e.to_string()))?;

    let backend = answer_cmd::backend(provider, &args.p, &file)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;

    let started_at = crate::now_rfc3339();
    let wall = Instant::now();
    let total = suite.cases.len() as u64 * u64::from(args.repeat);
    let bar = progress(total, args.no_progress);
    let mut runs = Vec::new();
    let mut hallucination: Vec<HallucinationCheck> = Vec::new();
    let mut model = None;
    for case in &suite.cases {
        for repeat in 1..=args.repeat {
            bar.set_message(case.id.clone());
            let run = run_case(
                &runtime,
                &source,
                embed.as_deref(),
                &backend,
                &case.question,
                &settings,
                (&case.id, repeat, args.retrieval_only),
            )?;
            if repeat == 1 {
                hallucination.push(hallucination_check(
                    &case.id,
                    &run.1,
                    settings.profile,
                    settings.policy,
                    provenance(&case.question),
                ));
            }
            if model.is_none() {
                model.clone_from(&run.0.contract.model);
            }
            if bar.is_hidden() {
                eprintln!(
                    "eval: {}/{} {} {} ({:.0} ms)",
                    runs.len() + 1,
                    total,
                    case.id,
                    outcome_word(&run.0.contract),
                    run.0.latency_ms
                );
            }
            runs.push(run.0);
            bar.inc(1);
        }
    }
    bar.finish_and_clear();

    let (cases, metrics) = score(&suite, &runs, &hallucination);
    let thresholds = check_thresholds(&suite.thresholds, &metrics);
    let passed = thresholds.iter().all(|t| t.passed);
    let result = EvalResult {
        format: RESULT_FORMAT.to_string(),
        suite: suite.name.clone(),
        suite_path: suite_name,
        provider: backend.generator().provider().to_string(),
        model,
        started_at,
        wall_s: wall.elapsed().as_secs_f64(),
        repeat: args.repeat,
        settings: json!({
            "corpus": corpus_label,
            "top_k": settings.top_k,
            "retrieval": if embed.is_some() { "hybrid" } else { "bm25" },
            "gate": settings.gate,
            "candidates": settings.candidates,
            "match": settings.profile,
            "claims": settings.policy,
        }),
        metrics,
        cases,
        runs,
        hallucination,
        thresholds,
        passed,
    };
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
    Ok(if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(4)
    })
}

fn unreachable_corpus() -> Result<(Source, String), BadInput> {
    // Suite::validate guarantees one of docs or chunks.
    Err(BadInput::new("corpus", "set docs or chunks"))
}

fn provenance(question: &str) -> Provenance {
    Provenance {
        trace_id: crate::new_trace_id(),
        created_at: crate::now_rfc3339(),
        question: Some(question.to_string()),
        model: None,
    }
}

fn outcome_word(c: &Contract) -> String {
    match &c.refusal {
        None => format!("answered, {} claim(s)", c.claims.len()),
        Some(r) => format!("refused {:?}", r.code),
    }
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

/// One run of one case: the pipeline, timed, and the chunks it retrieved
/// (for the hallucination check).
fn run_case(
    runtime: &tokio::runtime::Runtime,
    source: &Source,
    embed: Option<&dyn Embed>,
    backend: &Backend,
    question: &str,
    settings: &AskSettings,
    (case_id, repeat, retrieval_only): (&str, u32, bool),
) -> anyhow::Result<(CaseRun, ChunkSet)> {
    let started = Instant::now();
    let retrieval = match source {
        Source::Index(index) => groundcite_ask::retrieve(index, embed, question, settings)?,
        // A chunks corpus is what an upstream retriever returned: every
        // chunk goes to the model, and there is no gate to apply.
        Source::Chunks(chunks) => Retrieval::given(chunks.clone()),
    };
    let chunks = retrieval.chunks.clone();
    let retrieved: Vec<String> = chunks.chunks().iter().map(|c| c.chunk_id.clone()).collect();
    let gate_passed = retrieval.gate_passed();
    let mut gate = groundcite_ask::gate_options(&retrieval, settings).to_value();
    // The ranked candidates with their scores, for the report and tuning.
    if let Some(o) = gate.as_object_mut() {
        o.insert("candidates".into(), json!(retrieval.candidates));
    }
    let candidates: Vec<String> = retrieval
        .candidates
        .iter()
        .map(|c| c.text.clone())
        .collect();
    let mut retrieval = retrieval;
    if retrieval_only {
        retrieval.verdict = groundcite_ask::Verdict::Refuse("retrieval only".into());
    }
    let prov = provenance(question);
    let trace_id = prov.trace_id.clone();
    let asked = runtime.block_on(groundcite_ask::answer(
        retrieval,
        Some(backend),
        question,
        settings,
        prov.clone(),
        &mut |_, _| true,
    ));
    let run = match asked {
        Ok(asked) => {
            let answered = asked.answered.as_ref();
            let raw = answered.and_then(|a| a.raw_output.as_deref());
            let form = answered.map_or(AnswerForm::Grounded, |a| a.form);
            let (claims_in, citations_in) = produced(raw, form, &asked.contract);
            if let (Some(o), Some(p)) =
                (gate.as_object_mut(), answered.and_then(|a| a.p_answerable))
            {
                o.insert("p_answerable".into(), json!(p));
            }
            CaseRun {
                case_id: case_id.to_string(),
                repeat,
                trace_id,
                retrieved,
                gate_passed,
                claims_in,
                citations_in,
                latency_ms: ms(started),
                generate_ms: answered.map(|a| a.generate_time.as_secs_f64() * 1000.0),
                error: None,
                stop_reason: answered.map(|a| a.stop_reason.as_str().to_string()),
                candidates,
                gate: Some(gate),
                contract: asked.contract,
            }
        }
        // A provider failure on one case is recorded (R3 with the error)
        // rather than ending a long run; it counts in error_rate.
        Err(AskError::Answer(AnswerError::Provider { error, .. })) => CaseRun {
            case_id: case_id.to_string(),
            repeat,
            trace_id,
            retrieved,
            gate_passed,
            claims_in: 0,
            citations_in: 0,
            latency_ms: ms(started),
            generate_ms: None,
            stop_reason: Some(
                groundcite_providers::StopReason::of_error(&error)
                    .as_str()
                    .to_string(),
            ),
            error: Some(error.to_string()),
            candidates,
            gate: Some(gate),
            contract: Contract::refused(RefusalCode::R3, prov, settings.profile, Vec::new()),
        },
        Err(e) => return Err(anyhow::anyhow!(e)),
    };
    Ok((run, chunks))
}

/// Claims and citations the model produced: counted in its raw output when
/// that is a GroundedAnswer, else (native citations, prose) rebuilt from
/// the contract: kept ones plus those its warnings say were dropped.
fn produced(raw: Option<&str>, form: AnswerForm, c: &Contract) -> (usize, usize) {
    // Repeats of a kept claim are dropped unchecked (`duplicate_claim`):
    // the metrics are over the distinct claims, as the service's signals.
    let repeats: BTreeSet<usize> = c
        .warnings
        .iter()
        .filter(|w| w.code == WarningCode::DuplicateClaim)
        .filter_map(|w| w.claim_index)
        .collect();
    if let Some(a) = raw.and_then(|r| form.parse_answer(r.as_bytes()).ok()) {
        let distinct = a
            .claims
            .iter()
            .enumerate()
            .filter(|(i, _)| !repeats.contains(i));
        let (claims, citations) =
            distinct.fold((0, 0), |(n, c), (_, cl)| (n + 1, c + cl.citations.len()));
        // Claims sent with `answerable: false` are dropped unread.
        return (claims, citations);
    }
    let kept_citations: usize = c.claims.iter().map(|cl| cl.citations.len()).sum();
    let dropped_citations = c
        .warnings
        .iter()
        .filter(|w| w.citation_index.is_some())
        .count();
    let failed_claims = c
        .warnings
        .iter()
        .filter(|w| w.code.is_verification_failure())
        .count();
    (
        c.claims.len() + failed_claims,
        kept_citations + dropped_citations,
    )
}

fn ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests {
    use groundcite_core::{Chunk, GroundedAnswer, MatchProfile, verify};

    use super::*;

    #[test]
    fn repeated_claims_are_not_counted_as_produced() {
        let chunks: Vec<Chunk> = serde_json::from_str(
            r#"[{"chunk_id": "c1", "content": "Refunds are available within 30 days."}]"#,
        )
        .expect("chunks");
        let chunks = ChunkSet::new(chunks).expect("chunks");
        let claim = r#"{"text": "Refunds take 30 days.", "citations": [{"chunk_id": "c1", "quote": "within 30 days"}, {"chunk_id": "c1", "quote": "Refunds are available"}]}"#;
        let raw = format!(r#"{{"answerable": true, "claims": [{claim}, {claim}, {claim}]}}"#);
        let answer: GroundedAnswer = serde_json::from_str(&raw).expect("answer");
        let c = verify(
            &answer,
            &chunks,
            MatchProfile::default(),
            Provenance {
                trace_id: "t".into(),
                created_at: "2026-12-01T00:00:00Z".into(),
                question: None,
                model: None,
            },
        );
        assert_eq!(c.claims.len(), 1);
        // One distinct claim and its two citations, both verified.
        assert_eq!(produced(Some(&raw), AnswerForm::Grounded, &c), (1, 2));
    }
}
