//! Benchmark of the embedded model: prompt and generation tokens/s with and
//! without the grammar, the mask's cost per token, against llama.cpp's own
//! greedy sampler loop on the same GGUF, context settings and machine.
//!
//! `cargo run --release -p groundcite-local --example bench_local -- [RUNS]`
//! (the model from `scripts/setup`, or GROUNDCITE_MODEL). Prints a Markdown
//! table (medians over RUNS, default 5) for BENCHMARKS.md.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use groundcite_core::schema::Target;
use groundcite_core::{Chunk, ChunkSet};
use groundcite_local::grammar::{GrammarLimits, QuoteMode, grounded_grammar, schema_grammar};
use groundcite_local::{Engine, EngineOptions, Message, RunOptions, RunOutput, find_model};
use groundcite_providers::ResponseSchema;

fn chunk(id: &str, content: &str) -> Chunk {
    Chunk {
        chunk_id: id.into(),
        content: content.into(),
        source_title: None,
        source_url: None,
        page_number: None,
        score: None,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn per_sec(n: usize, d: Duration) -> f64 {
    n as f64 / d.as_secs_f64().max(1e-9)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runs: usize = std::env::args().nth(1).map_or(Ok(5), |a| a.parse())?;
    let path = find_model(None)?;
    let engine = Engine::load(&path, EngineOptions::default())?;
    let chunks = ChunkSet::new(vec![
        chunk(
            "refunds.md#chunk-0",
            "# Refunds\n\nWe refund the full price of an unused item returned within 30 days of delivery. Refunds are issued to the original payment method within 5 business days after the warehouse receives the item.",
        ),
        chunk(
            "shipping.md#chunk-0",
            "# Shipping\n\nStandard shipping takes 3 to 7 business days. Express shipping arrives in 1 to 2 business days and costs $15.",
        ),
        chunk(
            "warranty.md#chunk-0",
            "# Warranty\n\nEvery tent and backpack carries a two-year limited warranty against defects in materials and workmanship, counted from the date of purchase.",
        ),
    ])?;
    let question = "How long does a refund take?";
    let system = groundcite_local::prompt::LOCAL_SYSTEM_PROMPT.to_string();
    let user = groundcite_local::prompt::user_message(chunks.chunks(), question);
    let prompt = engine.render_chat(&[
        Message {
            role: "system",
            content: system,
        },
        Message {
            role: "user",
            content: user,
        },
    ])?;
    let limits = GrammarLimits::default();
    let schema = ResponseSchema::grounded_answer(Target::OpenAi).schema;
    let json_only = schema_grammar(&schema);
    let free = grounded_grammar(chunks.chunks(), QuoteMode::Free, &limits);
    let verbatim = grounded_grammar(chunks.chunks(), QuoteMode::Verbatim, &limits);
    let max_tokens = 160;
    // Token by token, as the reference: what the mask itself costs.
    let opts = |grammar| RunOptions {
        grammar: Some(grammar),
        max_tokens,
        fast_forward: false,
        answerable_threshold: None,
        repeat_guard: false,
        close_reserve: None,
        stable_prefix: 0,
        persist_prefix: false,
    };

    type Case<'a> = (
        &'a str,
        Box<dyn Fn() -> Result<RunOutput, groundcite_local::LocalError> + 'a>,
    );
    let cases: Vec<Case> = vec![
        (
            "llama.cpp greedy sampler, no grammar, 160 tokens (reference)",
            Box::new(|| engine.run_reference(&prompt, max_tokens)),
        ),
        (
            "JSON schema grammar",
            Box::new(|| engine.run_with(&prompt, opts(&json_only), &mut |_| true)),
        ),
        (
            "grounded grammar, free quotes",
            Box::new(|| engine.run_with(&prompt, opts(&free), &mut |_| true)),
        ),
        (
            "grounded grammar, verbatim quotes",
            Box::new(|| engine.run_with(&prompt, opts(&verbatim), &mut |_| true)),
        ),
    ];
    println!(
        "model: {} ({}), load {:.2} s, threads {}",
        engine.name(),
        path.display(),
        engine.load_time().as_secs_f64(),
        EngineOptions::default().threads
    );
    println!();
    println!(
        "| mode | prompt tok | prompt tok/s | output tok (sampled + forced) | generation tok/s | mask ms/sampled token | grammar build ms |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (name, f) in &cases {
        f()?; // warm-up
        let mut pt = Vec::new();
        let mut gt = Vec::new();
        let mut mask = Vec::new();
        let mut build = Vec::new();
        let mut last = RunOutput::default();
        for _ in 0..runs {
            let r = f()?;
            pt.push(per_sec(r.prompt_tokens, r.prompt_time));
            gt.push(per_sec(
                r.sampled_tokens + r.forced_tokens,
                r.generation_time,
            ));
            mask.push(r.mask_time.as_secs_f64() * 1000.0 / r.sampled_tokens.max(1) as f64);
            build.push(r.grammar_time.as_secs_f64() * 1000.0);
            last = r;
        }
        println!(
            "| {name} | {} | {:.0} | {} ({} + {}) | {:.1} | {:.3} | {:.2} |",
            last.prompt_tokens,
            median(pt),
            last.sampled_tokens + last.forced_tokens,
            last.sampled_tokens,
            last.forced_tokens,
            median(gt),
            median(mask),
            median(build),
        );
    }
    Ok(())
}
