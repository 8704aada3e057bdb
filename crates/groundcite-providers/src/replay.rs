//! Test support: a local HTTP/1.1 server that replays recorded wire
//! exchanges and asserts every request against its recording.
//!
//! A cassette (`testdata/providers/<provider>/<case>.json`) lists the
//! exchanges in the order they must happen. For each request the server
//! checks the method, the path, the query (exactly), the recorded headers
//! (exact values; `absent_headers` must not be sent) and the body (JSON equal
//! to the recording, or form fields equal); any difference is recorded as a
//! failure and answered with HTTP 418 so the client fails too. Expectations
//! are never loosened to make a test pass: fix the code or re-record.
//!
//! Responses replay status, headers and a JSON body, a text body or
//! Server-Sent Events (written in separate TCP writes, optionally split
//! mid-event), or misbehave on purpose: `hang` (no answer until the client
//! times out), `reset` (TCP reset, after the events if any), `close`.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A recorded conversation with a provider, plus the test's input and the
/// expected outcome (free-form JSON the test interprets).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cassette {
    /// What the case shows.
    pub description: String,
    /// The test's input (question, chunk file, options).
    #[serde(default)]
    pub input: Value,
    /// The expected outcome.
    #[serde(default)]
    pub expect: Value,
    /// The exchanges, in order.
    pub exchanges: Vec<Exchange>,
}

/// One request and the response to it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exchange {
    /// What the client must send.
    pub request: ExpectedRequest,
    /// What the server answers.
    pub response: RecordedResponse,
}

/// The request a client must send.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedRequest {
    /// HTTP method.
    pub method: String,
    /// Path, without the query.
    pub path: String,
    /// Query parameters, exactly (none when absent).
    #[serde(default)]
    pub query: BTreeMap<String, String>,
    /// Headers that must be sent with exactly these values (names in lower case).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Headers whose values must match a pattern in which `*` stands for
    /// any run of characters: for values that change with every request
    /// (an AWS SigV4 `authorization` holds the date and the signature),
    /// with everything else in them fixed.
    #[serde(default)]
    pub header_patterns: BTreeMap<String, String>,
    /// Headers that must not be sent.
    #[serde(default)]
    pub absent_headers: Vec<String>,
    /// The JSON body, exactly.
    #[serde(default)]
    pub body: Option<Value>,
    /// A file (relative to the cassette) holding the JSON body, exactly;
    /// shared by the cases of a provider that send the same request.
    #[serde(default)]
    pub body_file: Option<String>,
    /// Form fields of an `application/x-www-form-urlencoded` body, exactly.
    #[serde(default)]
    pub form: Option<BTreeMap<String, String>>,
}

/// Deliberate misbehaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Read the request, then send nothing for `delay_ms`.
    Hang,
    /// Reset the connection (after the SSE events, if any).
    Reset,
    /// Close the connection without a response.
    Close,
}

/// What the server answers.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedResponse {
    /// Status code.
    #[serde(default = "ok")]
    pub status: u16,
    /// Response headers.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// A JSON body.
    #[serde(default)]
    pub body: Option<Value>,
    /// A text body, sent as is.
    #[serde(default)]
    pub body_text: Option<String>,
    /// Server-Sent Events, each the text of one event without its blank line.
    #[serde(default)]
    pub sse: Option<Vec<String>>,
    /// AWS event-stream messages (`application/vnd.amazon.eventstream`,
    /// as Bedrock's ConverseStream answers), each framed with its prelude
    /// and CRC-32 checksums by the server.
    #[serde(default)]
    pub event_stream: Option<Vec<EventMessage>>,
    /// Write each event in two halves (split in the middle).
    #[serde(default)]
    pub split_events: bool,
    /// Send a JSON or text body with chunked transfer encoding, in pieces
    /// of 64 bytes, and no `content-length`: the client learns its size
    /// only by reading it.
    #[serde(default)]
    pub chunked: bool,
    /// Delay before answering (or, with `hang`, how long to hang).
    #[serde(default)]
    pub delay_ms: u64,
    /// Misbehaviour.
    #[serde(default)]
    pub action: Option<Action>,
}

/// One AWS event-stream message: string headers (`:message-type`,
/// `:event-type` or `:exception-type`, `:content-type`) and a JSON payload.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventMessage {
    /// Headers, all sent with the string type (7).
    pub headers: BTreeMap<String, String>,
    /// The payload, sent as compact JSON.
    pub payload: Value,
}

/// The binary frame of `m`: total length, headers length, prelude CRC-32,
/// headers, payload, message CRC-32 (all big-endian).
fn event_frame(m: &EventMessage) -> Vec<u8> {
    let mut headers = Vec::new();
    for (k, v) in &m.headers {
        headers.push(k.len() as u8);
        headers.extend_from_slice(k.as_bytes());
        headers.push(7);
        headers.extend_from_slice(&(v.len() as u16).to_be_bytes());
        headers.extend_from_slice(v.as_bytes());
    }
    let payload = m.payload.to_string().into_bytes();
    let total = 12 + headers.len() + payload.len() + 4;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&(total as u32).to_be_bytes());
    out.extend_from_slice(&(headers.len() as u32).to_be_bytes());
    let prelude_crc = crc32(&out);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(&headers);
    out.extend_from_slice(&payload);
    let message_crc = crc32(&out);
    out.extend_from_slice(&message_crc.to_be_bytes());
    out
}

/// CRC-32 (IEEE 802.3, as the event-stream framing uses), bit by bit:
/// test data is small.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

fn ok() -> u16 {
    200
}

impl Cassette {
    /// Loads a cassette, resolving `body_file`s relative to it.
    pub fn load(path: &Path) -> Result<Cassette, CassetteError> {
        let read = |path: &Path| {
            std::fs::read_to_string(path).map_err(|error| CassetteError::Read {
                path: path.to_path_buf(),
                error,
            })
        };
        let text = read(path)?;
        let mut c: Cassette =
            serde_json::from_str(&text).map_err(|error| CassetteError::NotACassette {
                path: path.to_path_buf(),
                error,
            })?;
        let dir = path.parent().unwrap_or(Path::new("."));
        for ex in &mut c.exchanges {
            if let Some(f) = ex.request.body_file.take() {
                if ex.request.body.is_some() {
                    return Err(CassetteError::TwoBodies {
                        path: path.to_path_buf(),
                    });
                }
                let p: PathBuf = dir.join(&f);
                let t = read(&p)?;
                ex.request.body =
                    Some(
                        serde_json::from_str(&t).map_err(|error| CassetteError::BodyNotJson {
                            path: p.clone(),
                            error,
                        })?,
                    );
            }
        }
        Ok(c)
    }
}

/// Why [`Cassette::load`] failed. The inner error is part of the message
/// (not a `source`), so a chain printer does not repeat it.
#[derive(Debug, thiserror::Error)]
pub enum CassetteError {
    /// The cassette or one of its body files could not be read.
    #[error("cannot read {}: {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        error: io::Error,
    },
    /// The cassette is not a cassette's JSON.
    #[error("{}: not a cassette: {error}", path.display())]
    NotACassette {
        /// The cassette.
        path: PathBuf,
        /// Why.
        error: serde_json::Error,
    },
    /// An exchange has both `body` and `body_file`.
    #[error("{}: both body and body_file", path.display())]
    TwoBodies {
        /// The cassette.
        path: PathBuf,
    },
    /// A `body_file` is not JSON.
    #[error("{}: not JSON: {error}", path.display())]
    BodyNotJson {
        /// The body file.
        path: PathBuf,
        /// Why.
        error: serde_json::Error,
    },
}

#[derive(Debug, Default)]
struct State {
    exchanges: Vec<Exchange>,
    next: usize,
    failures: Vec<String>,
}

/// A running replay server on `127.0.0.1` with its own thread and runtime,
/// usable from synchronous and asynchronous tests alike. Dropping it stops it.
#[derive(Debug)]
pub struct ReplayServer {
    addr: std::net::SocketAddr,
    state: Arc<Mutex<State>>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ReplayServer {
    /// Starts a server that expects `exchanges` in order.
    pub fn start(exchanges: Vec<Exchange>) -> io::Result<ReplayServer> {
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let state = Arc::new(Mutex::new(State {
            exchanges,
            ..State::default()
        }));
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let st = Arc::clone(&state);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()?;
        let thread = std::thread::spawn(move || {
            runtime.block_on(async move {
                let Ok(listener) = TcpListener::from_std(std_listener) else {
                    return;
                };
                tokio::select! {
                    _ = rx => {}
                    _ = accept_loop(listener, st) => {}
                }
            });
        });
        Ok(ReplayServer {
            addr,
            state,
            shutdown: Some(tx),
            thread: Some(thread),
        })
    }

    /// Starts a server for a cassette's exchanges.
    pub fn for_cassette(c: &Cassette) -> io::Result<ReplayServer> {
        ReplayServer::start(c.exchanges.clone())
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Requests received so far.
    pub fn served(&self) -> usize {
        self.state.lock().map_or(0, |s| s.next)
    }

    /// Every mismatch so far, plus any exchange that never happened.
    pub fn problems(&self) -> Vec<String> {
        let Ok(s) = self.state.lock() else {
            return vec!["the replay server's state is poisoned".into()];
        };
        let mut out = s.failures.clone();
        if s.next < s.exchanges.len() {
            out.push(format!(
                "only {} of {} recorded exchanges happened",
                s.next,
                s.exchanges.len()
            ));
        }
        out
    }
}

impl Drop for ReplayServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn accept_loop(listener: TcpListener, state: Arc<Mutex<State>>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let st = Arc::clone(&state);
        tokio::spawn(async move {
            let _ = serve(stream, st).await;
        });
    }
}

struct Received {
    method: String,
    target: String,
    headers: BTreeMap<String, String>,
    body: Vec<u8>,
}

async fn read_request(stream: &mut TcpStream) -> io::Result<Option<Received>> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let head_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p;
        }
        let n = stream.read(&mut tmp).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let method = parts.next().unwrap_or_default().to_string();
    let target = parts.next().unwrap_or_default().to_string();
    let mut headers = BTreeMap::new();
    for line in lines {
        if let Some((k, v)) = line.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let mut body = buf[head_end + 4..].to_vec();
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while body.len() < len {
        let n = stream.read(&mut tmp).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&tmp[..n]);
    }
    Ok(Some(Received {
        method,
        target,
        headers,
        body,
    }))
}

/// Differences between a received request and its recording.
fn compare(expected: &ExpectedRequest, got: &Received) -> Vec<String> {
    let mut diffs = Vec::new();
    if !expected.method.eq_ignore_ascii_case(&got.method) {
        diffs.push(format!(
            "method {} != recorded {}",
            got.method, expected.method
        ));
    }
    let (path, query) = got.target.split_once('?').unwrap_or((&got.target, ""));
    if path != expected.path {
        diffs.push(format!("path {path} != recorded {}", expected.path));
    }
    let query: BTreeMap<String, String> = url::form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    if query != expected.query {
        diffs.push(format!("query {query:?} != recorded {:?}", expected.query));
    }
    for (k, v) in &expected.headers {
        match got.headers.get(&k.to_ascii_lowercase()) {
            Some(actual) if actual == v => {}
            Some(_) => diffs.push(format!("header {k} differs from the recording")),
            None => diffs.push(format!("header {k} missing")),
        }
    }
    for (k, pattern) in &expected.header_patterns {
        match got.headers.get(&k.to_ascii_lowercase()) {
            Some(actual) if glob_match(pattern, actual) => {}
            Some(_) => diffs.push(format!("header {k} does not match the recorded pattern")),
            None => diffs.push(format!("header {k} missing")),
        }
    }
    for k in &expected.absent_headers {
        if got.headers.contains_key(&k.to_ascii_lowercase()) {
            diffs.push(format!("header {k} must not be sent"));
        }
    }
    match (&expected.body, &expected.form) {
        (Some(want), _) => match serde_json::from_slice::<Value>(&got.body) {
            Ok(actual) if &actual == want => {}
            Ok(actual) => diffs.push(format!(
                "JSON body differs from the recording:\n  got:      {actual}\n  recorded: {want}"
            )),
            Err(e) => diffs.push(format!("body is not JSON: {e}")),
        },
        (None, Some(want)) => {
            let actual: BTreeMap<String, String> = url::form_urlencoded::parse(&got.body)
                .into_owned()
                .collect();
            if &actual != want {
                let keys: Vec<_> = actual.keys().collect();
                diffs.push(format!(
                    "form body differs from the recording (fields sent: {keys:?})"
                ));
            }
        }
        (None, None) => {
            if !got.body.is_empty() {
                diffs.push(format!("unexpected body of {} bytes", got.body.len()));
            }
        }
    }
    diffs
}

/// Whether `text` matches `pattern`, where `*` matches any run of
/// characters (possibly empty) and everything else matches itself.
fn glob_match(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let Some(first) = parts.next() else {
        return text.is_empty();
    };
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        // No `*`: the whole text must equal the pattern.
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

async fn serve(mut stream: TcpStream, state: Arc<Mutex<State>>) -> io::Result<()> {
    let Some(req) = read_request(&mut stream).await? else {
        return Ok(());
    };
    let exchange = {
        let Ok(mut s) = state.lock() else {
            return Ok(());
        };
        let i = s.next;
        s.next += 1;
        match s.exchanges.get(i).cloned() {
            Some(ex) => {
                let diffs = compare(&ex.request, &req);
                if diffs.is_empty() {
                    Some(ex)
                } else {
                    s.failures.push(format!(
                        "request {} ({} {}):\n{}",
                        i + 1,
                        req.method,
                        req.target,
                        diffs.join("\n")
                    ));
                    None
                }
            }
            None => {
                let recorded = s.exchanges.len();
                s.failures.push(format!(
                    "unexpected request {} ({} {}): only {recorded} recorded",
                    i + 1,
                    req.method,
                    req.target,
                ));
                None
            }
        }
    };
    let Some(ex) = exchange else {
        let body = "request does not match the recording";
        let resp = format!(
            "HTTP/1.1 418 I'm a teapot\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(resp.as_bytes()).await?;
        return stream.shutdown().await;
    };
    let r = ex.response;
    if r.delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(r.delay_ms)).await;
    }
    match r.action {
        Some(Action::Hang) => return Ok(()),
        Some(Action::Close) => return Ok(()),
        Some(Action::Reset) if r.sse.is_none() && r.event_stream.is_none() => {
            reset(stream);
            return Ok(());
        }
        _ => {}
    }
    let mut head = format!("HTTP/1.1 {} {}\r\n", r.status, reason(r.status));
    let content_type = if r.event_stream.is_some() {
        "application/vnd.amazon.eventstream"
    } else if r.sse.is_some() {
        "text/event-stream"
    } else if r.body.is_some() {
        "application/json"
    } else {
        "text/plain"
    };
    if !r
        .headers
        .keys()
        .any(|k| k.eq_ignore_ascii_case("content-type"))
    {
        head.push_str(&format!("content-type: {content_type}\r\n"));
    }
    for (k, v) in &r.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("connection: close\r\n");
    let body = || match (&r.body, &r.body_text) {
        (Some(v), _) => v.to_string(),
        (None, Some(t)) => t.clone(),
        (None, None) => String::new(),
    };
    let chunks: Option<Vec<Vec<u8>>> = match (&r.sse, &r.event_stream) {
        (Some(events), _) => Some(
            events
                .iter()
                .map(|ev| format!("{ev}\n\n").into_bytes())
                .collect(),
        ),
        (None, Some(messages)) => Some(messages.iter().map(event_frame).collect()),
        (None, None) if r.chunked => {
            Some(body().as_bytes().chunks(64).map(<[u8]>::to_vec).collect())
        }
        (None, None) => None,
    };
    if let Some(events) = &chunks {
        head.push_str("transfer-encoding: chunked\r\n\r\n");
        stream.write_all(head.as_bytes()).await?;
        for bytes in events {
            let parts: Vec<&[u8]> = if r.split_events && bytes.len() > 1 {
                // SSE text is split on a character boundary; binary frames
                // anywhere.
                let mut mid = bytes.len() / 2;
                if r.sse.is_some() {
                    while mid < bytes.len() && (bytes[mid] & 0xC0) == 0x80 {
                        mid += 1;
                    }
                }
                vec![&bytes[..mid], &bytes[mid..]]
            } else {
                vec![bytes.as_slice()]
            };
            for p in parts {
                stream
                    .write_all(format!("{:x}\r\n", p.len()).as_bytes())
                    .await?;
                stream.write_all(p).await?;
                stream.write_all(b"\r\n").await?;
                stream.flush().await?;
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        }
        if r.action == Some(Action::Reset) {
            reset(stream);
            return Ok(());
        }
        stream.write_all(b"0\r\n\r\n").await?;
    } else {
        let body = body();
        head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(body.as_bytes()).await?;
    }
    stream.flush().await?;
    stream.shutdown().await
}

/// Closes with a TCP reset (SO_LINGER 0).
fn reset(stream: TcpStream) {
    #[allow(deprecated)]
    let _ = stream.set_linger(Some(Duration::ZERO));
    drop(stream);
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}

#[cfg(test)]
mod tests {
    use super::{EventMessage, crc32, event_frame, glob_match};

    #[test]
    fn event_frames() {
        // The check value of CRC-32/ISO-HDLC.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        let m = EventMessage {
            headers: [(":event-type".to_string(), "messageStop".to_string())].into(),
            payload: serde_json::json!({"stopReason": "end_turn"}),
        };
        let f = event_frame(&m);
        let total = u32::from_be_bytes([f[0], f[1], f[2], f[3]]) as usize;
        assert_eq!(total, f.len());
        let headers = u32::from_be_bytes([f[4], f[5], f[6], f[7]]) as usize;
        assert_eq!(headers, 1 + 11 + 1 + 2 + 11);
        assert_eq!(crc32(&f[..8]).to_be_bytes(), f[8..12]);
        assert_eq!(crc32(&f[..f.len() - 4]).to_be_bytes(), f[f.len() - 4..]);
    }

    #[test]
    fn patterns() {
        assert!(glob_match("abc", "abc"));
        assert!(!glob_match("abc", "abcd"));
        assert!(glob_match("a*c", "abbbc"));
        assert!(glob_match("a*c", "ac"));
        assert!(!glob_match("a*c", "ab"));
        assert!(glob_match(
            "AWS4-HMAC-SHA256 Credential=AKID/*/us-east-1/bedrock/aws4_request, SignedHeaders=*, Signature=*",
            "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc123"
        ));
        assert!(!glob_match(
            "AWS4-HMAC-SHA256 Credential=AKID/*/us-east-1/bedrock/aws4_request, *",
            "AWS4-HMAC-SHA256 Credential=AKID/20260101/eu-west-1/bedrock/aws4_request, x"
        ));
        assert!(glob_match("a*b*a", "aba"));
        assert!(!glob_match("a*b*a", "ab"));
    }
}
