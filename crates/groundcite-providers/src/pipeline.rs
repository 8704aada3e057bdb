//! Generate, then verify: the one answer pipeline behind `groundcite
//! answer`, `groundcite ask` and the service's `/v1/answer`.
//!
//! [`answer`] calls a [`Generator`] and turns what comes back into contract
//! v1 with the core's verifier. Output failures (refusal, content filter,
//! truncation, output that is not a valid answer) become refusal contracts
//! (R4 or R3), never errors, so every caller reports them the same way;
//! only a failure to get an answer at all (network, credentials, retries
//! exhausted) is an [`AnswerError`].

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use groundcite_core::native::{NativeFormat, SourceLayout, anthropic, bedrock};
use groundcite_core::stream::StreamVerifier;
use groundcite_core::{
    AnswerForm, Candidate, ChunkSet, ClaimOutcome, ClaimPolicy, Contract, MatchProfile, Provenance,
    RefusalCode, verify_with,
};

use crate::error::ProviderError;
use crate::generator::{Generator, Mode};
use crate::types::{Generation, GenerationRequest, Output, StopReason, Usage};

/// Builds the request a backend's generator expects for one question, from
/// the retrieved chunks, the question and the candidate sentences ranked
/// for it (empty when the caller ranked none).
pub type RequestBuilder = dyn Fn(&ChunkSet, &str, &[Candidate]) -> GenerationRequest + Send + Sync;

/// A configured generator and the way to build its requests (the local
/// model has its own prompt and source caps; structured and native-citation
/// providers have theirs). Cheap to clone.
#[derive(Clone)]
pub struct Backend {
    generator: Arc<dyn Generator>,
    build: Arc<RequestBuilder>,
    wants_candidates: bool,
}

impl Backend {
    /// A backend from a generator and its request builder (which has no
    /// use for candidate sentences: hosted models read whole chunks).
    pub fn new(
        generator: Arc<dyn Generator>,
        build: impl Fn(&ChunkSet, &str) -> GenerationRequest + Send + Sync + 'static,
    ) -> Backend {
        Backend {
            generator,
            build: Arc::new(move |chunks, question, _| build(chunks, question)),
            wants_candidates: false,
        }
    }

    /// A backend whose requests are built from candidate sentences too
    /// (the embedded model's extractive mode).
    pub fn with_candidates(
        generator: Arc<dyn Generator>,
        build: impl Fn(&ChunkSet, &str, &[Candidate]) -> GenerationRequest + Send + Sync + 'static,
    ) -> Backend {
        Backend {
            generator,
            build: Arc::new(build),
            wants_candidates: true,
        }
    }

    /// Whether requests use candidate sentences (so the caller should rank
    /// them).
    pub fn wants_candidates(&self) -> bool {
        self.wants_candidates
    }

    /// The generator.
    pub fn generator(&self) -> &dyn Generator {
        self.generator.as_ref()
    }

    /// A shared handle on the generator.
    pub fn shared_generator(&self) -> Arc<dyn Generator> {
        Arc::clone(&self.generator)
    }

    /// The request for `question` over `chunks`.
    pub fn request(&self, chunks: &ChunkSet, question: &str) -> GenerationRequest {
        (self.build)(chunks, question, &[])
    }

    /// The request for `question` over `chunks`, quoting among `candidates`
    /// when the backend uses them.
    pub fn request_with(
        &self,
        chunks: &ChunkSet,
        question: &str,
        candidates: &[Candidate],
    ) -> GenerationRequest {
        (self.build)(chunks, question, candidates)
    }
}

impl fmt::Debug for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Backend")
            .field("generator", &self.generator)
            .finish_non_exhaustive()
    }
}

/// Sends one minimal request with the exact schema of `backend`, so the
/// provider (or the embedded model) compiles its grammar before the first
/// user request: the seed's fix for the cold-start latency of structured
/// outputs. An output failure (the tiny request may well be truncated)
/// still warms the grammar; a provider that cannot be reached, or rejects
/// the request, is an error.
pub async fn warm_up(backend: &Backend) -> Result<Duration, ProviderError> {
    let chunks = ChunkSet::new(vec![groundcite_core::Chunk {
        chunk_id: "warmup#1".into(),
        content: "groundcite is warming up.".into(),
        source_title: None,
        source_url: None,
        page_number: None,
        score: None,
    }])
    .map_err(|e| {
        ProviderError::new(
            crate::ErrorKind::Config,
            backend.generator().provider(),
            e.to_string(),
        )
    })?;
    let mut request = backend.request(&chunks, "Is groundcite warming up?");
    request.max_tokens = request.token_limit().map_or(16, |n| n.min(16));
    let started = Instant::now();
    match backend.generator().generate(&request).await {
        Ok(_) => Ok(started.elapsed()),
        Err(e) if e.is_output_failure() => Ok(started.elapsed()),
        Err(e) => Err(e),
    }
}

/// How to verify, and whether to stream.
#[derive(Debug, Clone, Copy)]
pub struct AnswerSettings {
    /// The matching profile.
    pub profile: MatchProfile,
    /// What to do with claims whose quotes do not carry their quantities.
    pub policy: ClaimPolicy,
    /// Stream the generation and verify each claim as its JSON object closes.
    pub stream: bool,
}

/// What [`answer`] produced: the contract and everything a trace records.
#[derive(Debug)]
pub struct Answered {
    /// The verified contract (a refusal contract for output failures).
    pub contract: Contract,
    /// The model's raw output, exactly as received (partial for failures).
    pub raw_output: Option<String>,
    /// The model that answered, when known.
    pub model: Option<String>,
    /// Token counts (of a failed generation too, where the generator
    /// reports them).
    pub usage: Option<Usage>,
    /// Why the generation ended.
    pub stop_reason: StopReason,
    /// The model's own probability that the sources answer the question,
    /// where the generator measures it.
    pub p_answerable: Option<f64>,
    /// How the raw output spells its claims (re-verification parses it the
    /// same way).
    pub form: AnswerForm,
    /// The provider's native citations the raw output carries instead of a
    /// JSON answer (`None`: structured output).
    pub native: Option<NativeFormat>,
    /// The provider's request ID.
    pub request_id: Option<String>,
    /// Time spent generating (the provider's call, retries included).
    pub generate_time: Duration,
    /// The provider's output failure behind a refusal contract.
    pub error: Option<ProviderError>,
    /// Why groundcite itself refused the output (R3), when it did.
    pub note: Option<String>,
}

impl Answered {
    /// How the raw output is read back, as a trace's `answer_form` records
    /// it: the answer form of structured output (`grounded`,
    /// `extractive`), else the native format (`anthropic`,
    /// `bedrock-converse`).
    pub fn output_form(&self) -> &'static str {
        self.native.map_or(self.form.as_str(), NativeFormat::as_str)
    }

    /// Whether this answer counts as a schema-parsing error: the output was
    /// truncated or is not a valid answer (refusal R3).
    pub fn is_schema_parsing_error(&self) -> bool {
        self.contract
            .refusal
            .as_ref()
            .is_some_and(|r| r.code == RefusalCode::R3)
    }
}

/// Why no contract could be produced.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    /// The provider could not be reached, rejected the request or kept
    /// failing; `raw_output` holds what streamed before the failure.
    #[error("{error}")]
    Provider {
        /// The typed error (secrets already scrubbed).
        error: ProviderError,
        /// Output received before the failure.
        raw_output: Option<String>,
    },
    /// The claim callback asked to stop (the client went away).
    #[error("the answer was cancelled")]
    Cancelled,
}

/// Generates an answer for `request` and verifies it against `chunks`.
///
/// With `settings.stream` and a structured generator, each claim is
/// verified as soon as its JSON object closes and handed to `on_claim`
/// (index in the model's output, outcome); `on_claim` returns `false` to
/// stop, which drops the stream and so cancels the generation. Without
/// streaming `on_claim` is never called.
pub async fn answer(
    generator: &dyn Generator,
    request: &GenerationRequest,
    chunks: &ChunkSet,
    settings: AnswerSettings,
    provenance: Provenance,
    on_claim: &mut (dyn FnMut(usize, &ClaimOutcome) -> bool + Send),
) -> Result<Answered, AnswerError> {
    let run = Run {
        chunks,
        settings,
        provenance,
        form: request.form,
        started: Instant::now(),
    };
    if settings.stream && matches!(generator.mode(), Mode::Structured(_)) {
        return run.streamed(generator, request, on_claim).await;
    }
    let generation = if settings.stream {
        match generator.generate_stream(request).await {
            Ok(s) => s.finish().await,
            Err(e) => Err(e),
        }
    } else {
        generator.generate(request).await
    };
    match generation {
        Ok(g) => Ok(run.verified(g)),
        Err(e) => run.failed(e, None),
    }
}

struct Run<'a> {
    chunks: &'a ChunkSet,
    settings: AnswerSettings,
    provenance: Provenance,
    form: AnswerForm,
    started: Instant,
}

impl Run<'_> {
    fn provenance(&self, model: Option<&str>) -> Provenance {
        let mut p = self.provenance.clone();
        if let Some(m) = model {
            p.model = Some(m.to_string());
        }
        p
    }

    fn refused(&self, code: RefusalCode, model: Option<&str>) -> Contract {
        Contract::refused(
            code,
            self.provenance(model),
            self.settings.profile,
            Vec::new(),
        )
    }

    /// An output failure becomes a refusal contract; anything else is an error.
    fn failed(&self, e: ProviderError, raw: Option<String>) -> Result<Answered, AnswerError> {
        let raw_output = raw.or_else(|| e.partial_output().map(str::to_string));
        if !e.is_output_failure() {
            return Err(AnswerError::Provider {
                error: e,
                raw_output,
            });
        }
        let usage = e.usage();
        Ok(Answered {
            contract: self.refused(e.refusal_code(), e.model()),
            raw_output,
            model: e.model().map(str::to_string),
            usage: (usage != Usage::default()).then_some(usage),
            stop_reason: StopReason::of_error(&e),
            p_answerable: None,
            form: self.form,
            native: None,
            request_id: e.request_id().map(str::to_string),
            generate_time: self.started.elapsed(),
            error: Some(e),
            note: None,
        })
    }

    fn verified(&self, g: Generation) -> Answered {
        let raw_output = match &g.output {
            Output::Json(text) => text.clone(),
            Output::AnthropicCitations(v) | Output::BedrockCitations(v) => v.to_string(),
        };
        let provenance = self.provenance(g.model.as_deref());
        let (profile, policy) = (self.settings.profile, self.settings.policy);
        let (contract, note) = match &g.output {
            Output::Json(text) => match self.form.parse_answer(text.as_bytes()) {
                Ok(answer) => (
                    verify_with(&answer, self.chunks, profile, policy, provenance),
                    None,
                ),
                Err(e) => (
                    self.refused(RefusalCode::R3, g.model.as_deref()),
                    Some(format!("the model's output is not a valid answer ({e})")),
                ),
            },
            Output::AnthropicCitations(message) => {
                let layout = SourceLayout::one_per_chunk(self.chunks);
                match anthropic::convert(message, self.chunks, &layout, profile, policy, provenance)
                {
                    Ok(c) => (c, None),
                    Err(e) => (
                        self.refused(RefusalCode::R3, g.model.as_deref()),
                        Some(format!("the provider's citations cannot be read ({e})")),
                    ),
                }
            }
            Output::BedrockCitations(response) => {
                // The adapter sends chunk i as plain-text document i.
                let layout = SourceLayout::one_per_chunk(self.chunks);
                match bedrock::convert_converse(
                    response,
                    self.chunks,
                    &layout,
                    profile,
                    policy,
                    provenance,
                ) {
                    Ok(c) => (c, None),
                    Err(e) => (
                        self.refused(RefusalCode::R3, g.model.as_deref()),
                        Some(format!("the provider's citations cannot be read ({e})")),
                    ),
                }
            }
        };
        let stop_reason = if note.is_some() {
            StopReason::InvalidOutput
        } else {
            StopReason::Stop
        };
        let native = match &g.output {
            Output::Json(_) => None,
            Output::AnthropicCitations(_) => Some(NativeFormat::Anthropic),
            Output::BedrockCitations(_) => Some(NativeFormat::BedrockConverse),
        };
        Answered {
            contract,
            raw_output: Some(raw_output),
            model: g.model,
            usage: Some(g.usage),
            stop_reason,
            p_answerable: g.p_answerable,
            form: self.form,
            native,
            request_id: g.request_id,
            generate_time: self.started.elapsed(),
            error: None,
            note,
        }
    }

    async fn streamed(
        self,
        generator: &dyn Generator,
        request: &GenerationRequest,
        on_claim: &mut (dyn FnMut(usize, &ClaimOutcome) -> bool + Send),
    ) -> Result<Answered, AnswerError> {
        let mut stream = match generator.generate_stream(request).await {
            Ok(s) => s,
            Err(e) => return self.failed(e, None),
        };
        let mut verifier = StreamVerifier::new(self.chunks, self.settings.profile)
            .with_claim_policy(self.settings.policy)
            .with_form(self.form);
        let mut invalid = None;
        let mut raw = String::new();
        loop {
            let delta = match stream.next_delta().await {
                Ok(Some(d)) => d,
                Ok(None) => break,
                Err(e) => return self.failed(e, Some(raw)),
            };
            raw.push_str(&delta);
            if invalid.is_some() {
                continue;
            }
            match verifier.feed(&delta) {
                Ok(outcomes) => {
                    for (index, outcome) in outcomes {
                        if !on_claim(index, &outcome) {
                            // Dropping the stream cancels the generation.
                            return Err(AnswerError::Cancelled);
                        }
                    }
                }
                // Keep reading: the provider's own verdict (refusal,
                // truncation) takes precedence over ours.
                Err(e) => invalid = Some(e),
            }
        }
        let generation = match stream.finish().await {
            Ok(g) => g,
            Err(e) => return self.failed(e, Some(raw)),
        };
        let model = generation.model.clone();
        let (contract, note) = match invalid {
            Some(e) => (
                self.refused(RefusalCode::R3, model.as_deref()),
                Some(format!("the streamed output is not a valid answer ({e})")),
            ),
            None => match verifier.finish(self.provenance(model.as_deref())) {
                Ok(c) => (c, None),
                Err(e) => (
                    self.refused(RefusalCode::R3, model.as_deref()),
                    Some(format!("the streamed output is not a valid answer ({e})")),
                ),
            },
        };
        let stop_reason = if note.is_some() {
            StopReason::InvalidOutput
        } else {
            StopReason::Stop
        };
        Ok(Answered {
            contract,
            raw_output: Some(raw),
            model,
            usage: Some(generation.usage),
            stop_reason,
            p_answerable: generation.p_answerable,
            form: self.form,
            native: None,
            request_id: generation.request_id,
            generate_time: self.started.elapsed(),
            error: None,
            note,
        })
    }
}
