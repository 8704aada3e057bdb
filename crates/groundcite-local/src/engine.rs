//! The model runner: llama.cpp on the CPU, greedy decoding, with the
//! llguidance mask applied to the logits in our own loop (so the mask's cost
//! is measured, tokens the grammar forces are decoded in one batch, and a
//! closed output channel stops the generation).

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::token::LlamaToken;
use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::TokEnv;
use llguidance::{Matcher, ParserFactory};

use crate::LocalError;

static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();

/// llama.cpp's process-wide backend, initialised once, its logging silenced
/// (it would otherwise print hundreds of lines to stderr per load).
fn backend() -> Result<&'static LlamaBackend, LocalError> {
    BACKEND
        .get_or_init(|| {
            llama_cpp_2::send_logs_to_tracing(
                llama_cpp_2::LogOptions::default().with_logs_enabled(false),
            );
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| LocalError::Backend(e.clone()))
}

/// How to load and run a model.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// CPU threads for generation and prompt processing (default: all cores,
    /// at most 8).
    pub threads: i32,
    /// Largest context to allocate (prompt + output), capped by what the
    /// model was trained for.
    pub max_context: u32,
    /// Decode tokens the grammar forces in one batch instead of sampling them
    /// one by one. Off by default: llguidance computes forced tokens only
    /// with a canonical tokenizer, and the environment built from llama.cpp's
    /// vocabulary is an approximate one, so nothing would be forced.
    pub fast_forward: bool,
}

impl Default for EngineOptions {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        EngineOptions {
            threads: i32::try_from(cores.min(8)).unwrap_or(2),
            max_context: 4096,
            fast_forward: false,
        }
    }
}

/// A chat message for the model's own chat template.
#[derive(Debug, Clone)]
pub struct Message {
    /// `system`, `user` or `assistant`.
    pub role: &'static str,
    /// The text.
    pub content: String,
}

/// What one run produced.
#[derive(Debug, Clone, Default)]
pub struct RunOutput {
    /// The generated text (lossless when it is UTF-8, which the JSON grammar
    /// guarantees).
    pub text: String,
    /// Why it stopped.
    pub stop: StopKind,
    /// Prompt tokens.
    pub prompt_tokens: usize,
    /// Tokens chosen by sampling.
    pub sampled_tokens: usize,
    /// Tokens the grammar forced (decoded in batches).
    pub forced_tokens: usize,
    /// Time to evaluate the prompt.
    pub prompt_time: Duration,
    /// Time from the end of the prompt to the last token.
    pub generation_time: Duration,
    /// Time spent computing grammar masks (included in `generation_time`).
    pub mask_time: Duration,
    /// Time to build the grammar's parser.
    pub grammar_time: Duration,
}

/// Why a run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StopKind {
    /// The model ended (end-of-generation token or the grammar completed).
    #[default]
    Done,
    /// The token limit.
    Length,
    /// The reader went away.
    Cancelled,
}

/// A loaded GGUF model with its llguidance tokenizer environment.
pub struct Engine {
    model: LlamaModel,
    template: LlamaChatTemplate,
    factory: ParserFactory,
    tok_env: TokEnv,
    options: EngineOptions,
    path: PathBuf,
    name: String,
    load_time: Duration,
    /// One generation at a time: the context is large and the cores few.
    busy: Mutex<()>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("path", &self.path)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// Loads a GGUF model (tokenizer and chat template come from the file).
    pub fn load(path: &Path, options: EngineOptions) -> Result<Engine, LocalError> {
        let started = Instant::now();
        if !path.is_file() {
            return Err(LocalError::Load {
                path: path.to_path_buf(),
                reason: "no such file".into(),
            });
        }
        let backend = backend()?;
        let model = LlamaModel::load_from_file(backend, path, &LlamaModelParams::default())
            .map_err(|e| LocalError::Load {
                path: path.to_path_buf(),
                // llama.cpp only says "null result": name the likely causes.
                reason: format!(
                    "{e} (not a GGUF file, or an architecture this llama.cpp does not support)"
                ),
            })?;
        let template = model.chat_template(None).map_err(|e| LocalError::Load {
            path: path.to_path_buf(),
            reason: format!("no chat template in the GGUF: {e}"),
        })?;
        let tok_env = llama_cpp_2::sampling::LlamaSampler::llguidance_tok_env(&model);
        let mut factory = ParserFactory::new_simple(&tok_env)
            .map_err(|e| LocalError::Grammar(format!("tokenizer environment: {e}")))?;
        factory.quiet();
        let name = model
            .meta_val_str("general.name")
            .ok()
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| {
                path.file_stem()
                    .map_or_else(|| "local".to_string(), |s| s.to_string_lossy().into_owned())
            });
        Ok(Engine {
            model,
            template,
            factory,
            tok_env,
            options,
            path: path.to_path_buf(),
            name,
            load_time: started.elapsed(),
            busy: Mutex::new(()),
        })
    }

    /// The model's name (GGUF `general.name`, else the file name).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where the model was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How long loading took.
    pub fn load_time(&self) -> Duration {
        self.load_time
    }

    /// The llguidance tokenizer environment (for tests and tools).
    pub fn tok_env(&self) -> &TokEnv {
        &self.tok_env
    }

    /// Renders messages with the model's chat template, ending with the
    /// assistant's turn opened.
    pub fn render_chat(&self, messages: &[Message]) -> Result<String, LocalError> {
        let chat = messages
            .iter()
            .map(|m| LlamaChatMessage::new(m.role.to_string(), m.content.clone()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| LocalError::Prompt(format!("a message holds a NUL byte: {e}")))?;
        self.model
            .apply_chat_template(&self.template, &chat, true)
            .map_err(|e| LocalError::Prompt(format!("chat template: {e}")))
    }

    /// Number of tokens of `text` (specials parsed, no BOS added).
    pub fn count_tokens(&self, text: &str) -> usize {
        self.model
            .vocab()
            .tokenize(text.as_bytes(), false, true)
            .len()
    }

    /// Compiles a Lark grammar into a matcher (errors name the grammar's
    /// problem).
    pub fn matcher(&self, lark: &str) -> Result<Matcher, LocalError> {
        let parser = self
            .factory
            .create_parser(TopLevelGrammar::from_lark(lark.to_string()));
        let matcher = Matcher::new(parser);
        match matcher.get_error() {
            Some(e) => Err(LocalError::Grammar(e)),
            None => Ok(matcher),
        }
    }

    /// Runs the model on a rendered prompt, greedily, under `grammar` when
    /// given, calling `on_text` with each new piece of text; `on_text`
    /// returning `false` cancels.
    pub fn run(
        &self,
        prompt: &str,
        grammar: Option<&str>,
        max_tokens: u32,
        on_text: &mut dyn FnMut(&str) -> bool,
    ) -> Result<RunOutput, LocalError> {
        self.run_with(
            prompt,
            grammar,
            max_tokens,
            self.options.fast_forward,
            on_text,
        )
    }

    /// [`Engine::run`] with fast-forwarding of grammar-forced tokens chosen
    /// per call (benchmarks compare both).
    pub fn run_with(
        &self,
        prompt: &str,
        grammar: Option<&str>,
        max_tokens: u32,
        fast_forward: bool,
        on_text: &mut dyn FnMut(&str) -> bool,
    ) -> Result<RunOutput, LocalError> {
        let _guard = self
            .busy
            .lock()
            .map_err(|_| LocalError::Backend("a previous generation panicked".into()))?;
        let mut out = RunOutput::default();
        let t = Instant::now();
        let mut matcher = grammar.map(|g| self.matcher(g)).transpose()?;
        out.grammar_time = t.elapsed();

        let vocab = self.model.vocab();
        let (mut ctx, mut batch, n_ctx) = self.prefill(prompt, max_tokens, &mut out)?;

        let t = Instant::now();
        let mut n_past = out.prompt_tokens;
        let mut bytes: Vec<u8> = Vec::new();
        let mut emitted = 0usize;
        let mut generated = 0usize;
        let n_vocab = usize::try_from(self.model.n_vocab()).unwrap_or(0);
        loop {
            if generated >= max_tokens as usize {
                out.stop = StopKind::Length;
                break;
            }
            let logits = ctx.get_logits_ith(batch.n_tokens() - 1);
            let token =
                match &mut matcher {
                    Some(m) => {
                        let tm = Instant::now();
                        let mask = m
                            .compute_mask()
                            .map_err(|e| LocalError::Grammar(e.to_string()))?;
                        out.mask_time += tm.elapsed();
                        argmax(
                            logits.iter().take(n_vocab).enumerate().filter(|(i, _)| {
                                u32::try_from(*i).is_ok_and(|id| mask.is_allowed(id))
                            }),
                        )
                    }
                    None => argmax(logits.iter().take(n_vocab).enumerate()),
                };
            let Some(token) = token else {
                return Err(LocalError::Grammar(
                    "the grammar allows no token here".into(),
                ));
            };
            let token = LlamaToken(token);
            if vocab.is_eog(token) {
                break;
            }
            let mut step = vec![token];
            if let Some(m) = &mut matcher {
                m.consume_token(token.0.cast_unsigned())
                    .map_err(|e| LocalError::Grammar(e.to_string()))?;
                if fast_forward && !m.is_stopped() {
                    let forced = m.consume_ff_tokens();
                    let forced_count = forced.len();
                    step.extend(
                        forced
                            .into_iter()
                            .filter_map(|t| i32::try_from(t).ok().map(LlamaToken)),
                    );
                    out.forced_tokens += forced_count;
                }
            }
            out.sampled_tokens += 1;
            generated += step.len();
            for tok in &step {
                bytes.extend(vocab.token_to_piece(*tok, false, None));
            }
            // Emit only whole characters: a token may end mid-character.
            let valid = match std::str::from_utf8(&bytes[emitted..]) {
                Ok(s) => s.len(),
                Err(e) => e.valid_up_to(),
            };
            if valid > 0 {
                let piece = String::from_utf8_lossy(&bytes[emitted..emitted + valid]);
                emitted += valid;
                if !on_text(&piece) {
                    out.stop = StopKind::Cancelled;
                    break;
                }
            }
            if matcher.as_ref().is_some_and(Matcher::is_stopped) {
                break;
            }
            if n_past + step.len() + 1 >= n_ctx as usize {
                out.stop = StopKind::Length;
                break;
            }
            batch.clear();
            let last = step.len() - 1;
            for (i, tok) in step.iter().enumerate() {
                batch
                    .add(*tok, pos(n_past + i), &[0], i == last)
                    .map_err(|e| LocalError::Backend(format!("batch: {e}")))?;
            }
            n_past += step.len();
            ctx.decode(&mut batch)
                .map_err(|e| LocalError::Backend(format!("decoding: {e}")))?;
        }
        out.generation_time = t.elapsed();
        if emitted < bytes.len() {
            let rest = String::from_utf8_lossy(&bytes[emitted..]).into_owned();
            on_text(&rest);
        }
        out.text = String::from_utf8_lossy(&bytes).into_owned();
        Ok(out)
    }
}

impl Engine {
    /// The reference loop for benchmarks: llama.cpp's own greedy sampler
    /// (`llama_sampler_init_greedy`), no grammar, no mask, one token per
    /// decode, exactly `max_tokens` tokens (end-of-generation ignored, as
    /// llama.cpp's own `llama-bench` does). What llama.cpp itself does per
    /// token, on the same context settings as [`Engine::run`].
    pub fn run_reference(&self, prompt: &str, max_tokens: u32) -> Result<RunOutput, LocalError> {
        let _guard = self
            .busy
            .lock()
            .map_err(|_| LocalError::Backend("a previous generation panicked".into()))?;
        let mut out = RunOutput::default();
        let vocab = self.model.vocab();
        let (mut ctx, mut batch, _) = self.prefill(prompt, max_tokens, &mut out)?;
        let t = Instant::now();
        let mut sampler = llama_cpp_2::sampling::LlamaSampler::greedy();
        let mut n_past = out.prompt_tokens;
        let mut bytes = Vec::new();
        while out.sampled_tokens < max_tokens as usize {
            let token = sampler.sample(&ctx, batch.n_tokens() - 1);
            sampler.accept(token);
            out.sampled_tokens += 1;
            bytes.extend(vocab.token_to_piece(token, false, None));
            batch.clear();
            batch
                .add(token, pos(n_past), &[0], true)
                .map_err(|e| LocalError::Backend(format!("batch: {e}")))?;
            n_past += 1;
            ctx.decode(&mut batch)
                .map_err(|e| LocalError::Backend(format!("decoding: {e}")))?;
        }
        out.generation_time = t.elapsed();
        out.text = String::from_utf8_lossy(&bytes).into_owned();
        Ok(out)
    }
}

impl Engine {
    /// Tokenizes `prompt`, checks that it and `max_tokens` fit the context,
    /// creates a context just large enough and evaluates the prompt; records
    /// the prompt's token count and time in `out`. Returns the context, the
    /// batch (its last entry holds the logits to sample from) and the
    /// context size.
    fn prefill(
        &self,
        prompt: &str,
        max_tokens: u32,
        out: &mut RunOutput,
    ) -> Result<
        (
            llama_cpp_2::context::LlamaContext<'_>,
            LlamaBatch<'static>,
            u32,
        ),
        LocalError,
    > {
        let tokens = self.model.vocab().tokenize(prompt.as_bytes(), false, true);
        out.prompt_tokens = tokens.len();
        let budget = tokens.len() + max_tokens as usize + 8;
        let limit = self.options.max_context.min(self.model.n_ctx_train()) as usize;
        if tokens.is_empty() || budget > limit {
            return Err(LocalError::ContextTooSmall {
                prompt_tokens: tokens.len(),
                max_tokens,
                context: limit,
            });
        }
        let n_ctx = u32::try_from(budget).unwrap_or(u32::MAX);
        // llama.cpp needs the whole prompt in one batch.
        let batch_size = u32::try_from(tokens.len().max(512)).unwrap_or(u32::MAX);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(batch_size)
            .with_n_ubatch(batch_size)
            .with_n_threads(self.options.threads)
            .with_n_threads_batch(self.options.threads);
        let mut ctx = self
            .model
            .new_context(backend()?, params)
            .map_err(|e| LocalError::Backend(format!("creating the context: {e}")))?;
        let t = Instant::now();
        let mut batch = LlamaBatch::new(tokens.len().max(64), 1);
        let last = tokens.len() - 1;
        for (i, tok) in tokens.iter().enumerate() {
            batch
                .add(*tok, pos(i), &[0], i == last)
                .map_err(|e| LocalError::Backend(format!("batch: {e}")))?;
        }
        ctx.decode(&mut batch)
            .map_err(|e| LocalError::Backend(format!("evaluating the prompt: {e}")))?;
        out.prompt_time = t.elapsed();
        Ok((ctx, batch, n_ctx))
    }
}

fn pos(i: usize) -> i32 {
    i32::try_from(i).unwrap_or(i32::MAX)
}

/// Index of the largest logit among `items` (ties: the lowest index).
fn argmax<'a>(items: impl Iterator<Item = (usize, &'a f32)>) -> Option<i32> {
    let mut best: Option<(usize, f32)> = None;
    for (i, &l) in items {
        if best.is_none_or(|(_, b)| l > b) {
            best = Some((i, l));
        }
    }
    best.and_then(|(i, _)| i32::try_from(i).ok())
}
