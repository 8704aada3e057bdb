//! The model runner: llama.cpp on the CPU, greedy decoding, with the
//! llguidance mask applied to the logits in our own loop (so the mask's cost
//! is measured, tokens the grammar forces are decoded in one batch, and a
//! closed output channel stops the generation).

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::{LlamaStateSeqFlags, SeqState};
use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{TokEnv, TokTrie, TokenId, TokenizerEnv};
use llguidance::{Matcher, ParserFactory};

use crate::LocalError;
use crate::guard::{JsonLexer, RepeatGuard};

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
    /// Allow runs to decode the tokens a grammar forces in one batch instead
    /// of sampling them one by one (on by default; a run asks for it with
    /// [`RunOptions::fast_forward`]).
    pub fast_forward: bool,
    /// Where the model's state after a prompt's fixed opening is kept for
    /// the next process (`src/prefix.rs`); `None`: in memory only. Only
    /// openings a run marks [`RunOptions::persist_prefix`] are written.
    pub prefix_cache: Option<PathBuf>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        EngineOptions {
            threads: i32::try_from(cores.min(8)).unwrap_or(2),
            max_context: 4096,
            fast_forward: true,
            prefix_cache: None,
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
    /// Leading prompt tokens whose state was restored instead of evaluated
    /// (the fixed opening, [`RunOptions::stable_prefix`]).
    pub prefix_reused: usize,
    /// Time from the end of the prompt to the last token.
    pub generation_time: Duration,
    /// Time spent computing grammar masks (included in `generation_time`).
    pub mask_time: Duration,
    /// Time to build the grammar's parser.
    pub grammar_time: Duration,
    /// The model's probability of `true` at the `"answerable":` value, when
    /// the grammar offered both (the decision the rest of the answer
    /// follows).
    pub p_answerable: Option<f32>,
    /// Whether the repeat guard cut a repeated element and closed the JSON
    /// ([`crate::guard`]).
    pub repeat_cut: bool,
    /// Whether the limit came near and the output was closed early
    /// ([`RunOptions::close_reserve`]).
    pub closed_early: bool,
    /// When the first output token was decoded.
    pub first_token_at: Option<Instant>,
    /// When each element of the outermost array (each claim) closed, with
    /// the repeat guard on.
    pub element_closed_at: Vec<Instant>,
    /// When the last token was decoded.
    pub ended_at: Option<Instant>,
}

/// How one run decodes.
#[derive(Debug, Clone, Copy)]
pub struct RunOptions<'a> {
    /// The Lark grammar to decode under (none: free text).
    pub grammar: Option<&'a str>,
    /// Output token limit.
    pub max_tokens: u32,
    /// Decode grammar-forced tokens in batches: the grammar is compiled over
    /// the canonical tokenizer environment, whose mask allows only
    /// canonical tokenizations. For grammars that force nearly every byte
    /// (candidate sentences); free text is better off without it (see
    /// [`Engine::load`]'s note).
    pub fast_forward: bool,
    /// At the `"answerable":` value, choose `true` only when the model's
    /// probability of it is at least this; `None` takes the likelier.
    pub answerable_threshold: Option<f32>,
    /// Cut a repeated element of the outermost array and close the JSON
    /// ([`crate::guard`]); the element being written is held back from
    /// `on_text` until it closes.
    pub repeat_guard: bool,
    /// When this few tokens of the limit are left, close the output: prefer
    /// tokens that end a string, an array or an object, so the JSON is
    /// complete before the limit (a grammar without a bound of its own,
    /// such as a caller's schema). `None`: never.
    pub close_reserve: Option<u32>,
    /// Bytes of the prompt that every prompt of its kind opens with (the
    /// chat template's system turn): their state is computed once and
    /// restored afterwards. 0: none.
    pub stable_prefix: usize,
    /// Also keep that opening's state on disk, in
    /// [`EngineOptions::prefix_cache`], for the next process. Only for
    /// openings groundcite wrote itself: a caller's system prompt stays in
    /// memory.
    pub persist_prefix: bool,
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
    model: Arc<LlamaModel>,
    template: LlamaChatTemplate,
    /// Parsers over the approximate tokenizer environment (no fast forward).
    factory: ParserFactory,
    /// Parsers over the canonical one (forced tokens fast-forwarded).
    factory_ff: ParserFactory,
    tok_env: TokEnv,
    options: EngineOptions,
    path: PathBuf,
    name: String,
    load_time: Duration,
    /// One generation at a time: the context is large and the cores few.
    busy: Mutex<()>,
    /// Every token's bytes, built the first time an output is closed.
    pieces: std::sync::OnceLock<Vec<Vec<u8>>>,
    /// The model file's identity for the prefix cache's keys.
    identity: String,
    /// States after fixed openings, most recently used last.
    prefixes: Mutex<Vec<(Vec<LlamaToken>, SeqState)>>,
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
        let model = Arc::new(model);
        // Two tokenizer environments. llama-cpp-2's own is approximate: the
        // mask allows every token sequence that spells the grammar's bytes,
        // as the model would write them. The canonical one tokenizes with
        // llama.cpp, which lets llguidance compute forced tokens (fast
        // forward) but also limits the mask to canonical tokenizations:
        // measured on a free-text schema answer, that pushed SmolLM2 off
        // its own words into a loop ("text": "Returns#1" and a URL of
        // "1111-" to the limit, where the approximate mask gives the
        // sentence it would write unconstrained). So the canonical one is
        // used only where the grammar forces nearly everything (candidate
        // sentences), the approximate one everywhere else.
        let tok_env = llama_cpp_2::sampling::LlamaSampler::llguidance_tok_env(&model);
        let canonical: TokEnv = Arc::new(LlamaTokEnv {
            trie: tok_env.tok_trie().clone(),
            model: Arc::clone(&model),
        });
        let factory = |env: &TokEnv| -> Result<ParserFactory, LocalError> {
            let mut f = ParserFactory::new_simple(env)
                .map_err(|e| LocalError::Grammar(format!("tokenizer environment: {e}")))?;
            f.quiet();
            Ok(f)
        };
        let factory_ff = factory(&canonical)?;
        let factory = factory(&tok_env)?;
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
            factory_ff,
            tok_env,
            options,
            path: path.to_path_buf(),
            name,
            load_time: started.elapsed(),
            busy: Mutex::new(()),
            pieces: std::sync::OnceLock::new(),
            identity: crate::prefix::identity(path),
            prefixes: Mutex::new(Vec::new()),
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

    /// The usable context in tokens (prompt and output together): the
    /// configured [`EngineOptions::max_context`], at most what the model was
    /// trained on.
    pub fn context_limit(&self) -> usize {
        self.options.max_context.min(self.model.n_ctx_train()) as usize
    }

    /// The most output tokens a run over the rendered `prompt` can have:
    /// what the context leaves after the prompt (and the few tokens
    /// [`Engine::run_with`] keeps in reserve). Fails when the prompt alone
    /// does not fit.
    pub fn output_room(&self, prompt: &str) -> Result<u32, LocalError> {
        let prompt_tokens = self.count_tokens(prompt);
        let context = self.context_limit();
        let room = context.saturating_sub(prompt_tokens + CONTEXT_RESERVE);
        if room == 0 {
            return Err(LocalError::PromptTooLong {
                prompt_tokens,
                context,
            });
        }
        Ok(u32::try_from(room).unwrap_or(u32::MAX))
    }

    /// Compiles a Lark grammar into a matcher (errors name the grammar's
    /// problem).
    pub fn matcher(&self, lark: &str) -> Result<Matcher, LocalError> {
        self.matcher_for(lark, false)
    }

    /// [`Engine::matcher`] over the canonical tokenizer environment when
    /// `fast_forward` (see [`RunOptions::fast_forward`]).
    fn matcher_for(&self, lark: &str, fast_forward: bool) -> Result<Matcher, LocalError> {
        let factory = if fast_forward {
            &self.factory_ff
        } else {
            &self.factory
        };
        let parser = factory.create_parser(TopLevelGrammar::from_lark(lark.to_string()));
        let matcher = Matcher::new(parser);
        match matcher.get_error() {
            Some(e) => Err(LocalError::Grammar(e)),
            None => Ok(matcher),
        }
    }

    /// Runs the model on a rendered prompt, greedily, under `grammar` when
    /// given, calling `on_text` with each new piece of text; `on_text`
    /// returning `false` cancels. Forced tokens are fast-forwarded as the
    /// engine's options say; no answerability threshold, no repeat guard.
    pub fn run(
        &self,
        prompt: &str,
        grammar: Option<&str>,
        max_tokens: u32,
        on_text: &mut dyn FnMut(&str) -> bool,
    ) -> Result<RunOutput, LocalError> {
        self.run_with(
            prompt,
            RunOptions {
                grammar,
                max_tokens,
                fast_forward: self.options.fast_forward,
                answerable_threshold: None,
                repeat_guard: false,
                close_reserve: None,
                stable_prefix: 0,
                persist_prefix: false,
            },
            on_text,
        )
    }

    /// Whether grammar-forced tokens are fast-forwarded by default.
    pub fn fast_forward(&self) -> bool {
        self.options.fast_forward
    }

    /// Runs the model with explicit [`RunOptions`].
    pub fn run_with(
        &self,
        prompt: &str,
        opts: RunOptions<'_>,
        on_text: &mut dyn FnMut(&str) -> bool,
    ) -> Result<RunOutput, LocalError> {
        let _guard = self
            .busy
            .lock()
            .map_err(|_| LocalError::Backend("a previous generation panicked".into()))?;
        let mut out = RunOutput::default();
        let t = Instant::now();
        let mut matcher = opts
            .grammar
            .map(|g| self.matcher_for(g, opts.fast_forward))
            .transpose()?;
        out.grammar_time = t.elapsed();

        let vocab = self.model.vocab();
        let opening = (opts.stable_prefix, opts.persist_prefix);
        let (mut ctx, mut batch, n_ctx) =
            self.prefill(prompt, opening, opts.max_tokens, &mut out)?;

        let t = Instant::now();
        let mut n_past = out.prompt_tokens;
        let mut bytes: Vec<u8> = Vec::new();
        let mut emitted = 0usize;
        let mut generated = 0usize;
        let mut decided = false;
        let mut repeats = opts.repeat_guard.then(RepeatGuard::new);
        let n_vocab = usize::try_from(self.model.n_vocab()).unwrap_or(0);
        loop {
            if generated >= opts.max_tokens as usize {
                out.stop = StopKind::Length;
                break;
            }
            let logits = ctx.get_logits_ith(batch.n_tokens() - 1);
            let token = match &mut matcher {
                Some(m) => {
                    let tm = Instant::now();
                    let mask = m
                        .compute_mask()
                        .map_err(|e| LocalError::Grammar(e.to_string()))?;
                    out.mask_time += tm.elapsed();
                    let allowed = |i: &usize| u32::try_from(*i).is_ok_and(|id| mask.is_allowed(id));
                    let mut choice = None;
                    if !decided
                        && at_answerable_value(&bytes)
                        && let Some(d) = self.answerable_decision(
                            logits
                                .iter()
                                .take(n_vocab)
                                .enumerate()
                                .filter(|(i, _)| allowed(i)),
                            opts.answerable_threshold,
                        )
                    {
                        decided = true;
                        out.p_answerable = Some(d.p_true);
                        choice = Some(d.token);
                    }
                    let closing = opts
                        .close_reserve
                        .is_some_and(|r| generated + r as usize >= opts.max_tokens as usize);
                    if choice.is_none() && closing {
                        choice = self.closing_choice(
                            &bytes,
                            logits
                                .iter()
                                .take(n_vocab)
                                .enumerate()
                                .filter(|(i, _)| allowed(i)),
                        );
                        out.closed_early = true;
                    }
                    match choice {
                        Some(c) => Some(c),
                        None => argmax(
                            logits
                                .iter()
                                .take(n_vocab)
                                .enumerate()
                                .filter(|(i, _)| allowed(i)),
                        ),
                    }
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
                if opts.fast_forward && !m.is_stopped() {
                    let room = (opts.max_tokens as usize).saturating_sub(generated + 1);
                    let forced = m.consume_ff_tokens();
                    if forced.len() > room {
                        // The grammar forces more than the limit allows:
                        // decode what fits, then stop at the limit.
                        step.extend(forced[..room].iter().filter_map(|&t| to_token(t)));
                        out.forced_tokens += room;
                    } else {
                        out.forced_tokens += forced.len();
                        step.extend(forced.into_iter().filter_map(to_token));
                    }
                }
            }
            out.sampled_tokens += 1;
            generated += step.len();
            for tok in &step {
                bytes.extend(vocab.token_to_piece(*tok, false, None));
            }
            let now = Instant::now();
            out.first_token_at.get_or_insert(now);
            out.ended_at = Some(now);
            // The repeat guard may cut a repeated element and close the JSON.
            let mut release_to = bytes.len();
            if let Some(g) = &mut repeats {
                let kept = g.elements_kept();
                if let Some(cut) = g.scan(&bytes) {
                    bytes.truncate(cut.keep);
                    bytes.extend_from_slice(cut.closers.as_bytes());
                    out.repeat_cut = true;
                    release_to = bytes.len();
                } else {
                    release_to = g.releasable(bytes.len());
                }
                for _ in kept..g.elements_kept() {
                    out.element_closed_at.push(now);
                }
            }
            // Emit only whole characters: a token may end mid-character.
            if release_to > emitted {
                let valid = match std::str::from_utf8(&bytes[emitted..release_to]) {
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
            }
            if out.repeat_cut || matcher.as_ref().is_some_and(Matcher::is_stopped) {
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
        if emitted < bytes.len() && out.stop != StopKind::Cancelled {
            let rest = String::from_utf8_lossy(&bytes[emitted..]).into_owned();
            on_text(&rest);
        }
        out.text = String::from_utf8_lossy(&bytes).into_owned();
        Ok(out)
    }

    /// At the `"answerable":` value: the probability of `true` among the
    /// allowed tokens and the token to take (`true` when its probability
    /// reaches `threshold`, else the likelier value). `None` unless the
    /// allowed tokens offer both values and nothing else (the grammar
    /// already decided).
    fn answerable_decision<'a>(
        &self,
        allowed: impl Iterator<Item = (usize, &'a f32)>,
        threshold: Option<f32>,
    ) -> Option<Decision> {
        let (yes, no) = (b't', b'f');
        let vocab = self.model.vocab();
        // (token, logit) of the allowed tokens starting `true` / `false`.
        let mut t: Vec<(usize, f32)> = Vec::new();
        let mut f: Vec<(usize, f32)> = Vec::new();
        for (i, &l) in allowed {
            let Ok(id) = i32::try_from(i) else { continue };
            let piece = vocab.token_to_piece(LlamaToken(id), false, None);
            match piece.trim_ascii_start().first() {
                Some(&b) if b == yes => t.push((i, l)),
                Some(&b) if b == no => f.push((i, l)),
                // Another continuation: not this decision.
                Some(_) => return None,
                None => {}
            }
        }
        if t.is_empty() || f.is_empty() {
            return None;
        }
        let max = t.iter().chain(&f).map(|&(_, l)| l).fold(f32::MIN, f32::max);
        let mass = |v: &[(usize, f32)]| v.iter().map(|&(_, l)| (l - max).exp()).sum::<f32>();
        let (mt, mf) = (mass(&t), mass(&f));
        let p_true = mt / (mt + mf);
        let take_true = match threshold {
            Some(th) => p_true >= th,
            None => p_true >= 0.5,
        };
        let side = if take_true { &t } else { &f };
        let token = argmax(side.iter().map(|(i, l)| (*i, l)))?;
        Some(Decision { p_true, token })
    }
}

struct Decision {
    p_true: f32,
    token: i32,
}

impl Engine {
    /// Whether token `i`'s text starts (after white space) with a closing
    /// quote or bracket.
    /// In closing mode: among the allowed tokens, the one that leaves the
    /// output least open (not white space, out of a string, then the fewest
    /// open containers), the likelier on a tie. A token that closes and
    /// opens again (`"}, {"`) does not count as closing.
    fn closing_choice<'a>(
        &self,
        output: &[u8],
        allowed: impl Iterator<Item = (usize, &'a f32)>,
    ) -> Option<i32> {
        let pieces = self.pieces.get_or_init(|| {
            let vocab = self.model.vocab();
            let n = usize::try_from(self.model.n_vocab()).unwrap_or(0);
            (0..n)
                .map(|i| {
                    i32::try_from(i).map_or_else(
                        |_| Vec::new(),
                        |id| vocab.token_to_piece(LlamaToken(id), false, None),
                    )
                })
                .collect()
        });
        let now = JsonState::after(JsonState::default(), output);
        let mut best: Option<((bool, bool, usize), f32, usize)> = None;
        for (i, &logit) in allowed {
            let Some(piece) = pieces.get(i) else { continue };
            let after = JsonState::after(now, piece);
            // White space outside a string never closes anything: without
            // this, the least open choice can be a newline forever.
            let idle = !now.in_string() && piece.iter().all(u8::is_ascii_whitespace);
            let key = (idle, after.in_string(), after.depth);
            let better = match &best {
                None => true,
                Some((k, l, _)) => key < *k || (key == *k && logit > *l),
            };
            if better {
                best = Some((key, logit, i));
            }
        }
        best.and_then(|(_, _, i)| i32::try_from(i).ok())
    }
}

/// Where a JSON text stands: inside a string or not, and how many
/// containers are open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct JsonState {
    lexer: JsonLexer,
    depth: usize,
}

impl JsonState {
    /// The state after `bytes` more.
    fn after(mut self, bytes: &[u8]) -> JsonState {
        for &b in bytes {
            match self.lexer.feed(b) {
                Some(b'{' | b'[') => self.depth += 1,
                Some(b'}' | b']') => self.depth = self.depth.saturating_sub(1),
                _ => {}
            }
        }
        self
    }

    fn in_string(self) -> bool {
        self.lexer.in_string()
    }
}

/// Whether the output so far ends right before the `answerable` value.
fn at_answerable_value(bytes: &[u8]) -> bool {
    bytes.trim_ascii_end().ends_with(b"\"answerable\":")
}

fn to_token(t: TokenId) -> Option<LlamaToken> {
    i32::try_from(t).ok().map(LlamaToken)
}

/// llguidance's tokenizer environment over llama.cpp's own tokenizer: the
/// token trie llama-cpp-2 builds from the vocabulary, with tokenization
/// delegated to the model, so it is canonical and llguidance can compute
/// the tokens a grammar forces.
struct LlamaTokEnv {
    trie: TokTrie,
    model: Arc<LlamaModel>,
}

impl TokenizerEnv for LlamaTokEnv {
    fn tok_trie(&self) -> &TokTrie {
        &self.trie
    }

    fn tokenize_bytes(&self, s: &[u8]) -> Vec<TokenId> {
        // llama.cpp tokenizes text; bytes that are not UTF-8 (a forced
        // prefix may end inside a character) go through the trie.
        let valid = match std::str::from_utf8(s) {
            Ok(_) => s.len(),
            Err(e) => e.valid_up_to(),
        };
        let mut out: Vec<TokenId> = self
            .model
            .vocab()
            .tokenize(&s[..valid], false, false)
            .into_iter()
            .map(|t| t.0.cast_unsigned())
            .collect();
        if valid < s.len() {
            out.extend(self.trie.greedy_tokenize(&s[valid..]));
        }
        out
    }

    fn tokenize_is_canonical(&self) -> bool {
        true
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
        let (mut ctx, mut batch, _) = self.prefill(prompt, (0, false), max_tokens, &mut out)?;
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
        (stable, persist): (usize, bool),
        max_tokens: u32,
        out: &mut RunOutput,
    ) -> Result<(LlamaContext<'_>, LlamaBatch<'static>, u32), LocalError> {
        let vocab = self.model.vocab();
        let tokens = vocab.tokenize(prompt.as_bytes(), false, true);
        out.prompt_tokens = tokens.len();
        let budget = tokens.len() + max_tokens as usize + CONTEXT_RESERVE;
        let limit = self.context_limit();
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
        // The fixed opening: restored when its state is kept, else evaluated
        // as a batch of its own and kept. Both ways the rest of the prompt
        // is a second batch over the same keys and values, so a restored
        // opening gives exactly the answer of an evaluated one.
        let opening = match prompt.get(..stable) {
            Some(head) if stable > 0 => {
                crate::prefix::shared_len(&vocab.tokenize(head.as_bytes(), false, true), &tokens)
            }
            _ => 0,
        };
        if opening > 0 {
            let head = &tokens[..opening];
            if self.restore_opening(&mut ctx, head, persist) {
                out.prefix_reused = opening;
            } else {
                let mut batch = LlamaBatch::new(opening, 1);
                for (i, tok) in head.iter().enumerate() {
                    batch
                        .add(*tok, pos(i), &[0], false)
                        .map_err(|e| LocalError::Backend(format!("batch: {e}")))?;
                }
                ctx.decode(&mut batch)
                    .map_err(|e| LocalError::Backend(format!("evaluating the prompt: {e}")))?;
                self.keep_opening(&ctx, head, persist);
            }
        }
        let rest = &tokens[opening..];
        // The batch is reused for the output, whose steps can be a whole
        // run of grammar-forced tokens: room for the longer of the two.
        let room = rest.len().max(max_tokens as usize + 1).max(64);
        let mut batch = LlamaBatch::new(room, 1);
        let last = rest.len() - 1;
        for (i, tok) in rest.iter().enumerate() {
            batch
                .add(*tok, pos(opening + i), &[0], i == last)
                .map_err(|e| LocalError::Backend(format!("batch: {e}")))?;
        }
        ctx.decode(&mut batch)
            .map_err(|e| LocalError::Backend(format!("evaluating the prompt: {e}")))?;
        out.prompt_time = t.elapsed();
        Ok((ctx, batch, n_ctx))
    }

    /// Restores the state after `head` into sequence 0 of `ctx`, from
    /// memory, else (when `persist`) from the disk cache. On any failure the
    /// context is cleared and `false` returned: the caller evaluates.
    fn restore_opening(
        &self,
        ctx: &mut LlamaContext<'_>,
        head: &[LlamaToken],
        persist: bool,
    ) -> bool {
        // Restored under the lock (runs are one at a time anyway), so the
        // state is not copied.
        let in_memory = self.prefixes.lock().ok().and_then(|mut p| {
            let i = p.iter().position(|(t, _)| t.as_slice() == head)?;
            let entry = p.remove(i);
            let restored = ctx.state_seq_set(&entry.1, 0).is_ok();
            p.push(entry);
            Some(restored)
        });
        match in_memory {
            Some(true) => return true,
            Some(false) => {
                ctx.clear_kv_cache();
                return false;
            }
            None => {}
        }
        let Some((dir, key)) = self.on_disk(head, persist) else {
            return false;
        };
        let Some(file) = crate::prefix::verified(dir, &key) else {
            return false;
        };
        match ctx.state_seq_load_file(&file, 0, head.len()) {
            Ok((stored, _)) if stored.as_slice() == head => {
                self.remember(ctx, head);
                true
            }
            _ => {
                ctx.clear_kv_cache();
                false
            }
        }
    }

    /// Keeps the state after `head` (just evaluated in `ctx`) in memory and,
    /// when `persist`, on disk. Best effort: the cache only saves time.
    fn keep_opening(&self, ctx: &LlamaContext<'_>, head: &[LlamaToken], persist: bool) {
        self.remember(ctx, head);
        if let Some((dir, key)) = self.on_disk(head, persist) {
            let _ =
                crate::prefix::store(dir, &key, |p| ctx.state_seq_save_file(p, 0, head).is_ok());
        }
    }

    /// The disk cache's folder and the key of `head`'s state in it, when
    /// the run may keep it there.
    fn on_disk(&self, head: &[LlamaToken], persist: bool) -> Option<(&Path, String)> {
        let dir = self.options.prefix_cache.as_deref().filter(|_| persist)?;
        let ids: Vec<i32> = head.iter().map(|t| t.0).collect();
        Some((dir, crate::prefix::key(&self.identity, &ids)))
    }

    fn remember(&self, ctx: &LlamaContext<'_>, head: &[LlamaToken]) {
        let Ok(state) = ctx.state_seq_get(0, LlamaStateSeqFlags::empty()) else {
            return;
        };
        if let Ok(mut p) = self.prefixes.lock() {
            p.retain(|(t, _)| t.as_slice() != head);
            if p.len() >= crate::prefix::IN_MEMORY {
                p.remove(0);
            }
            p.push((head.to_vec(), state));
        }
    }
}

/// Context tokens kept free beyond the prompt and the output limit.
const CONTEXT_RESERVE: usize = 8;

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
