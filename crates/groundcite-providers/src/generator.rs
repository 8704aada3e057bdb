//! The generator abstraction and the streaming handle.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use groundcite_core::schema::Target;
use tokio::sync::{mpsc, oneshot};

use crate::error::ProviderError;
use crate::http::{Sent, body_error};
use crate::sse::{SseDecoder, SseEvent};
use crate::types::{Generation, GenerationRequest};

/// A boxed, sendable future (keeps [`Generator`] object-safe).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a generator's output is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// JSON constrained by a strict schema in `Target`'s dialect
    /// ([`Output::Json`](crate::Output::Json)).
    Structured(Target),
    /// Provider-native citations ([`Output::AnthropicCitations`](crate::Output::AnthropicCitations)).
    NativeCitations,
}

/// Something that turns a [`GenerationRequest`] into a [`Generation`]: a
/// provider adapter (or, later, an embedded model).
///
/// Both methods fail with a typed [`ProviderError`]: refusals, content
/// filters, truncation and invalid JSON are errors, never generations, so
/// unusable model text cannot reach a contract.
pub trait Generator: Send + Sync + fmt::Debug {
    /// The provider's name (`openai`, `azure`, `anthropic`, …).
    fn provider(&self) -> &'static str;

    /// The output this generator produces.
    fn mode(&self) -> Mode;

    /// Generates the whole output.
    fn generate<'a>(
        &'a self,
        request: &'a GenerationRequest,
    ) -> BoxFuture<'a, Result<Generation, ProviderError>>;

    /// Starts a streamed generation; text arrives through
    /// [`GenerationStream::next_delta`].
    fn generate_stream<'a>(
        &'a self,
        request: &'a GenerationRequest,
    ) -> BoxFuture<'a, Result<GenerationStream, ProviderError>>;

    /// The most output tokens `request` can have: what the model's context
    /// leaves after its prompt, for a generator that knows its context (the
    /// embedded model); `Ok(None)` for one that does not (hosted providers
    /// enforce their own limits). Fails when the prompt alone does not fit.
    fn output_room(&self, request: &GenerationRequest) -> Result<Option<u32>, ProviderError> {
        let _ = request;
        Ok(None)
    }
}

/// What a stream decoder knows at the end.
#[derive(Debug, Clone)]
pub(crate) struct StreamMeta {
    pub request_id: Option<String>,
    pub attempts: u32,
    pub time_to_headers: Duration,
    pub time_to_first_token: Option<Duration>,
    pub total: Duration,
}

impl StreamMeta {
    /// The generation's timings.
    pub fn timings(&self) -> crate::types::Timings {
        crate::types::Timings {
            time_to_headers: self.time_to_headers,
            time_to_first_token: self.time_to_first_token,
            total: self.total,
            attempts: self.attempts,
        }
    }
}

/// Feeds `events` to `decoder` as a stream would and finishes it with the
/// metadata of one instant attempt: the text deltas handed out, and the
/// generation or error at the end. What the decoders' fuzz entry points
/// run; never panics where the decoder does not.
pub(crate) fn replay(
    mut decoder: Box<dyn StreamDecoder>,
    events: impl IntoIterator<Item = SseEvent>,
) -> (Vec<String>, Result<Generation, ProviderError>) {
    let mut deltas = Vec::new();
    for e in events {
        if let Err(e) = decoder.event(&e, &mut deltas) {
            return (deltas, Err(e));
        }
    }
    let end = decoder.finish(StreamMeta {
        request_id: None,
        attempts: 1,
        time_to_headers: Duration::ZERO,
        time_to_first_token: None,
        total: Duration::ZERO,
    });
    (deltas, end)
}

/// Provider-specific interpretation of stream events.
pub(crate) trait StreamDecoder: Send {
    /// Handles one event, appending any output text to `deltas`.
    fn event(&mut self, event: &SseEvent, deltas: &mut Vec<String>) -> Result<(), ProviderError>;
    /// Builds the generation (or the classified error) after the last event.
    fn finish(self: Box<Self>, meta: StreamMeta) -> Result<Generation, ProviderError>;
}

/// A generation in progress: pull text deltas with
/// [`next_delta`](GenerationStream::next_delta) until `None`, then
/// [`finish`](GenerationStream::finish) for the checked [`Generation`].
pub struct GenerationStream {
    provider: &'static str,
    source: Source,
    ready: VecDeque<String>,
    ended: bool,
    request_id: Option<String>,
    attempts: u32,
    started: Instant,
    time_to_headers: Duration,
    first_token: Option<Duration>,
}

impl fmt::Debug for GenerationStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GenerationStream")
            .field("provider", &self.provider)
            .field("request_id", &self.request_id)
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

/// How many times [`HttpConfig::max_response_bytes`](crate::HttpConfig) a
/// whole stream may be.
const STREAM_BYTES_PER_TEXT_BYTE: usize = 8;

/// Where a stream's text comes from.
enum Source {
    /// An HTTP response read as server-sent events.
    Http {
        response: Box<reqwest::Response>,
        sse: SseDecoder,
        decoder: Box<dyn StreamDecoder>,
        /// [`HttpConfig::max_response_bytes`](crate::HttpConfig): for one
        /// unfinished event, and for the output text.
        max_bytes: usize,
        /// Output text so far, in bytes.
        text_bytes: usize,
        /// Bytes of the stream so far.
        received: usize,
    },
    /// An in-process generator (the embedded model) running elsewhere: text
    /// through `deltas`, then the checked generation through `result`.
    Channel {
        deltas: mpsc::Receiver<String>,
        result: Option<oneshot::Receiver<Result<Generation, ProviderError>>>,
    },
}

/// The sending half of [`GenerationStream::channel`], held by an in-process
/// generator.
#[derive(Debug)]
pub struct StreamSender {
    /// Output text, in order. A failed send means the reader dropped the
    /// stream: the generator should stop.
    pub deltas: mpsc::Sender<String>,
    /// The checked generation (or the error), sent once at the end.
    pub result: oneshot::Sender<Result<Generation, ProviderError>>,
}

impl GenerationStream {
    /// A stream fed by an in-process generator through the returned
    /// [`StreamSender`]. Dropping the stream closes the channel, which is how
    /// the generator learns the reader has gone (and cancels).
    pub fn channel(provider: &'static str) -> (GenerationStream, StreamSender) {
        let (dtx, drx) = mpsc::channel(64);
        let (rtx, rrx) = oneshot::channel();
        let stream = GenerationStream {
            provider,
            source: Source::Channel {
                deltas: drx,
                result: Some(rrx),
            },
            ready: VecDeque::new(),
            ended: false,
            request_id: None,
            attempts: 1,
            started: Instant::now(),
            time_to_headers: Duration::ZERO,
            first_token: None,
        };
        (
            stream,
            StreamSender {
                deltas: dtx,
                result: rtx,
            },
        )
    }

    pub(crate) fn new(
        provider: &'static str,
        sent: Sent,
        decoder: Box<dyn StreamDecoder>,
    ) -> GenerationStream {
        GenerationStream {
            provider,
            source: Source::Http {
                response: Box::new(sent.response),
                sse: SseDecoder::default(),
                decoder,
                max_bytes: sent.max_bytes,
                text_bytes: 0,
                received: 0,
            },
            ready: VecDeque::new(),
            ended: false,
            request_id: sent.request_id,
            attempts: sent.attempts,
            started: sent.started,
            time_to_headers: sent.time_to_headers,
            first_token: None,
        }
    }

    /// The provider's request ID.
    pub fn request_id(&self) -> Option<&str> {
        self.request_id.as_deref()
    }

    /// The next piece of output text, `None` at the end of the stream.
    pub async fn next_delta(&mut self) -> Result<Option<String>, ProviderError> {
        loop {
            if let Some(d) = self.ready.pop_front() {
                return Ok(Some(d));
            }
            if self.ended {
                return Ok(None);
            }
            let (response, sse, decoder, max_bytes, text_bytes, received) = match &mut self.source {
                Source::Http {
                    response,
                    sse,
                    decoder,
                    max_bytes,
                    text_bytes,
                    received,
                } => (response, sse, decoder, *max_bytes, text_bytes, received),
                Source::Channel { deltas, .. } => {
                    match deltas.recv().await {
                        Some(d) => {
                            if self.first_token.is_none() {
                                self.first_token = Some(self.started.elapsed());
                            }
                            if !d.is_empty() {
                                self.ready.push_back(d);
                            }
                        }
                        None => self.ended = true,
                    }
                    continue;
                }
            };
            let too_large = |what, limit| {
                crate::http::too_large(self.provider, what, limit)
                    .with_request_id(self.request_id.clone())
                    .with_attempts(self.attempts)
            };
            let events = match response.chunk().await {
                Ok(Some(bytes)) => {
                    // Every token comes in an event of its own (100-250
                    // bytes of JSON for a few characters), so a whole
                    // stream may be several times the output; decoders keep
                    // some of each event (Anthropic's, all of them).
                    *received += bytes.len();
                    let stream_limit = max_bytes.saturating_mul(STREAM_BYTES_PER_TEXT_BYTE);
                    if *received > stream_limit {
                        return Err(too_large("stream", stream_limit));
                    }
                    let events = sse.feed(&bytes);
                    // An unfinished event is held in memory.
                    if sse.pending() > max_bytes {
                        return Err(too_large("stream's unfinished event", max_bytes));
                    }
                    events
                }
                Ok(None) => {
                    self.ended = true;
                    sse.finish()
                }
                Err(e) => {
                    return Err(body_error(
                        self.provider,
                        &e,
                        self.request_id.clone(),
                        self.attempts,
                    ));
                }
            };
            let mut deltas = Vec::new();
            for ev in &events {
                decoder
                    .event(ev, &mut deltas)
                    .map_err(|e| e.with_request_id(self.request_id.clone()))?;
            }
            *text_bytes += deltas.iter().map(String::len).sum::<usize>();
            if *text_bytes > max_bytes {
                return Err(too_large("streamed output text", max_bytes));
            }
            for d in deltas.into_iter().filter(|d| !d.is_empty()) {
                if self.first_token.is_none() {
                    self.first_token = Some(self.started.elapsed());
                }
                self.ready.push_back(d);
            }
        }
    }

    /// Reads the rest of the stream and returns the checked generation (or
    /// the classified error: refusal, truncation, invalid output, …).
    pub async fn finish(mut self) -> Result<Generation, ProviderError> {
        while self.next_delta().await?.is_some() {}
        let decoder = match self.source {
            Source::Http { decoder, .. } => decoder,
            Source::Channel { mut result, .. } => {
                let Some(rx) = result.take() else {
                    return Err(ProviderError::new(
                        crate::ErrorKind::Protocol,
                        self.provider,
                        "the stream was already finished",
                    ));
                };
                return match rx.await {
                    Ok(r) => r,
                    Err(_) => Err(ProviderError::new(
                        crate::ErrorKind::Protocol,
                        self.provider,
                        "the generator stopped without a result",
                    )),
                };
            }
        };
        let meta = StreamMeta {
            request_id: self.request_id.clone(),
            attempts: self.attempts,
            time_to_headers: self.time_to_headers,
            time_to_first_token: self.first_token,
            total: self.started.elapsed(),
        };
        decoder.finish(meta)
    }
}
