//! `groundcite verify`: one answer, or a JSON Lines batch in constant memory.

use std::collections::BTreeMap;
use std::io::{BufWriter, Read, Write};
use std::process::ExitCode;
use std::sync::mpsc::{Receiver, sync_channel};
use std::sync::{Arc, Mutex};

use anyhow::Context;
use groundcite_core::{
    Chunk, ChunkSet, ClaimPolicy, Contract, GroundedAnswer, MatchProfile, Provenance, render_text,
    validate_trace_id, verify_with,
};
use serde::Deserialize;

use crate::input::{self, BadInput, display_name};

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Renderer contract v1 as JSON.
    Json,
    /// The answer with footnotes, for a terminal.
    Text,
}

#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// Retrieved chunks: a JSON array or JSON Lines of {chunk_id, content,
    /// source_title?, source_url?, page_number?, score?}; `-` reads stdin.
    #[arg(long, value_name = "FILE", required_unless_present = "batch")]
    chunks: Option<String>,
    /// The model's answer: {answerable, claims: [{text, citations: [{chunk_id, quote}]}]}; `-` reads stdin.
    #[arg(long, value_name = "FILE", required_unless_present = "batch")]
    answer: Option<String>,
    /// The user's question, copied into the contract.
    #[arg(long, value_name = "TEXT", conflicts_with = "batch")]
    question: Option<String>,
    /// The model that produced the answer, copied into the contract.
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// Trace ID to use instead of a fresh UUIDv7.
    #[arg(long, value_name = "ID", conflicts_with = "batch")]
    trace_id: Option<String>,
    /// Matching profile: `default`, or the opt-in `lenient` (NFKC, dashes, ellipses, invisibles).
    #[arg(long = "match", value_name = "PROFILE", default_value = "default")]
    profile: MatchProfile,
    /// What to do with a claim asserting a quantity (amount, duration, date,
    /// percentage, count) that its verified quotes do not carry: `strict`
    /// drops it, `lenient` keeps it with an `unsupported_quantity` warning.
    #[arg(long = "claims", value_name = "POLICY", default_value = "strict")]
    claim_policy: ClaimPolicy,
    /// Output format.
    #[arg(long, value_enum, default_value = "json")]
    format: Format,
    /// Verify many requests: JSON Lines of {question?, chunks, answer, trace_id?, model?};
    /// writes one contract per line, in input order (`-` reads stdin).
    #[arg(long, value_name = "FILE.jsonl", conflicts_with_all = ["chunks", "answer"])]
    batch: Option<String>,
    /// Worker threads for --batch (default: the number of cores).
    #[arg(long, value_name = "N", requires = "batch")]
    jobs: Option<usize>,
}

pub fn run(args: VerifyArgs) -> anyhow::Result<ExitCode> {
    if let Some(batch) = &args.batch {
        if args.format != Format::Json {
            return Err(BadInput::new(
                "--format",
                "--batch writes JSON Lines; --format text is not available",
            )
            .into());
        }
        return run_batch(batch, &args);
    }
    let (Some(chunks_path), Some(answer_path)) = (&args.chunks, &args.answer) else {
        return Err(BadInput::new("arguments", "--chunks and --answer are both required").into());
    };
    if chunks_path == "-" && answer_path == "-" {
        return Err(BadInput::new(
            "<stdin>",
            "only one of --chunks and --answer can read stdin",
        )
        .into());
    }
    if let Some(id) = &args.trace_id {
        validate_trace_id(id).map_err(|m| BadInput::new("--trace-id", m))?;
    }
    let chunks = input::read_chunks(chunks_path)?;
    let answer = input::read_answer(answer_path)?;
    let contract = verify_with(
        &answer,
        &chunks,
        args.profile,
        args.claim_policy,
        Provenance {
            trace_id: args.trace_id.clone().unwrap_or_else(crate::new_trace_id),
            created_at: crate::now_rfc3339(),
            question: args.question.clone(),
            model: args.model.clone(),
        },
    );
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &contract)?;
            out.write_all(b"\n")?;
        }
        Format::Text => out.write_all(render_text(&contract).as_bytes())?,
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The verification rules a batch applies to every line.
#[derive(Debug, Clone, Copy)]
struct Rules {
    profile: MatchProfile,
    policy: ClaimPolicy,
}

/// One line of a batch file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchLine {
    #[serde(default)]
    question: Option<String>,
    chunks: Vec<Chunk>,
    answer: GroundedAnswer,
    #[serde(default)]
    trace_id: Option<String>,
    #[serde(default)]
    model: Option<String>,
}

/// Bytes per unit of work (whole lines; a longer line makes a longer block):
/// large enough to amortise channel traffic, small enough to keep memory
/// constant.
const BLOCK_BYTES: usize = 1 << 20;
/// Bytes asked of the input per read.
const READ_BYTES: usize = 256 << 10;

/// Whole lines of input (each ending in `\n`, but possibly the file's last).
struct Block {
    seq: u64,
    first_line: usize,
    bytes: Vec<u8>,
}

struct Done {
    seq: u64,
    output: Vec<u8>,
    bad: Vec<String>,
}

/// Reader → workers → ordered writer, with bounded channels so that memory
/// stays constant whatever the file size.
fn run_batch(path: &str, args: &VerifyArgs) -> anyhow::Result<ExitCode> {
    let name = display_name(path);
    let reader: Box<dyn Read + Send> = if path == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(
            std::fs::File::open(path)
                .map_err(|e| BadInput::new(&name, format!("cannot read: {e}")))?,
        )
    };
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        .max(1);
    let rules = Rules {
        profile: args.profile,
        policy: args.claim_policy,
    };
    let model = args.model.clone();

    let (work_tx, work_rx) = sync_channel::<Block>(jobs * 2);
    let work_rx = Arc::new(Mutex::new(work_rx));
    let (done_tx, done_rx) = sync_channel::<Done>(jobs * 2);

    std::thread::scope(|s| -> anyhow::Result<ExitCode> {
        let name_r = name.clone();
        let reader_handle = s.spawn(move || read_blocks(reader, &name_r, work_tx));
        for _ in 0..jobs {
            let rx = Arc::clone(&work_rx);
            let tx = done_tx.clone();
            let (name, model) = (name.clone(), model.clone());
            s.spawn(move || worker(&rx, &tx, &name, rules, model.as_deref()));
        }
        drop(done_tx);
        let bad = write_in_order(done_rx)?;
        let read_result = reader_handle
            .join()
            .map_err(|_| anyhow::anyhow!("the batch reader thread panicked"))?;
        read_result?;
        for msg in &bad {
            eprintln!("error: {msg}");
        }
        Ok(if bad.is_empty() {
            ExitCode::SUCCESS
        } else {
            eprintln!(
                "error: {} line(s) of {name} were bad input; each has an error object in its place in the output",
                bad.len()
            );
            ExitCode::from(2)
        })
    })
}

fn read_blocks(
    mut reader: Box<dyn Read + Send>,
    name: &str,
    tx: std::sync::mpsc::SyncSender<Block>,
) -> Result<(), BadInput> {
    let mut seq = 0;
    let mut first_line = 1;
    let mut carry: Vec<u8> = Vec::new();
    let mut eof = false;
    while !eof || !carry.is_empty() {
        let mut buf = std::mem::take(&mut carry);
        buf.reserve(BLOCK_BYTES);
        let mut has_newline = memchr::memchr(b'\n', &buf).is_some();
        // Fill up to a block, and past it until a line ends (long lines).
        while !eof && (buf.len() < BLOCK_BYTES || !has_newline) {
            let old = buf.len();
            // `read_to_end` reads into spare capacity without zeroing it
            // first; through `take` it stops after READ_BYTES, short only at
            // the end of the input.
            let n = (&mut reader)
                .take(READ_BYTES as u64)
                .read_to_end(&mut buf)
                .map_err(|e| BadInput {
                    line: Some(first_line),
                    ..BadInput::new(name, format!("cannot read: {e}"))
                })?;
            eof = n < READ_BYTES;
            has_newline = has_newline || memchr::memchr(b'\n', &buf[old..]).is_some();
        }
        let cut = if eof {
            buf.len()
        } else {
            memchr::memrchr(b'\n', &buf).map_or(buf.len(), |p| p + 1)
        };
        carry = buf.split_off(cut);
        if buf.is_empty() {
            continue;
        }
        let lines = memchr::memchr_iter(b'\n', &buf).count() + usize::from(!buf.ends_with(b"\n"));
        let block = Block {
            seq,
            first_line,
            bytes: buf,
        };
        if tx.send(block).is_err() {
            // The writer stopped (e.g. a closed pipe); nothing more to do.
            return Ok(());
        }
        seq += 1;
        first_line += lines;
    }
    Ok(())
}

fn worker(
    rx: &Mutex<Receiver<Block>>,
    tx: &std::sync::mpsc::SyncSender<Done>,
    name: &str,
    rules: Rules,
    model: Option<&str>,
) {
    loop {
        // A poisoned lock means another worker panicked; stop quietly.
        let block = match rx.lock() {
            Ok(guard) => guard.recv(),
            Err(_) => return,
        };
        let Ok(block) = block else { return };
        let mut output = Vec::with_capacity(block.bytes.len() / 2);
        let mut bad = Vec::new();
        let mut start = 0;
        let ends = memchr::memchr_iter(b'\n', &block.bytes).map(|p| p + 1);
        let ends = ends.chain((!block.bytes.ends_with(b"\n")).then_some(block.bytes.len()));
        for (i, end) in ends.enumerate() {
            let raw = &block.bytes[start..end];
            start = end;
            let line_no = block.first_line + i;
            match process_line(raw, line_no, name, rules, model) {
                Ok(None) => {}
                Ok(Some(contract)) => {
                    // Serializing our own types into a Vec cannot fail.
                    let _ = serde_json::to_writer(&mut output, &contract);
                    output.push(b'\n');
                }
                Err(e) => {
                    let err = serde_json::json!({"error": {
                        "code": "bad_input",
                        "line": line_no,
                        "path": e.path,
                        "message": e.message,
                    }});
                    let _ = serde_json::to_writer(&mut output, &err);
                    output.push(b'\n');
                    bad.push(e.to_string());
                }
            }
        }
        if tx
            .send(Done {
                seq: block.seq,
                output,
                bad,
            })
            .is_err()
        {
            return;
        }
    }
}

/// Verifies one batch line; `Ok(None)` for a blank line (skipped).
fn process_line(
    raw: &[u8],
    line_no: usize,
    name: &str,
    rules: Rules,
    model: Option<&str>,
) -> Result<Option<Contract>, BadInput> {
    // Fast path (see `parse_fast`); only a failure pays for path tracking,
    // to name the error precisely.
    let trimmed = raw.strip_suffix(b"\n").unwrap_or(raw);
    let parsed = if trimmed.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        parse_fast(trimmed)
    };
    let line = match parsed {
        Some(line) => line,
        None => match parse_slow(raw, line_no, name)? {
            Some(line) => line,
            None => return Ok(None),
        },
    };
    verify_line(line, line_no, name, rules, model).map(Some)
}

/// A batch line whose chunk contents are left undecoded.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LazyBatchLine<'a> {
    #[serde(default)]
    question: Option<String>,
    #[serde(borrow)]
    chunks: Vec<LazyChunk<'a>>,
    answer: GroundedAnswer,
    #[serde(default)]
    trace_id: Option<String>,
    #[serde(default)]
    model: Option<String>,
}

/// [`Chunk`] with its content as raw JSON (unknown fields ignored, as there).
#[derive(Debug, Deserialize)]
struct LazyChunk<'a> {
    chunk_id: String,
    #[serde(borrow)]
    content: &'a serde_json::value::RawValue,
    #[serde(default)]
    source_title: Option<String>,
    #[serde(default)]
    source_url: Option<String>,
    #[serde(default)]
    page_number: Option<u32>,
    #[serde(default)]
    score: Option<f64>,
}

/// Parses a batch line, decoding only the contents of the chunks the answer
/// cites: the others are never read again (sources list cited chunks only),
/// so they are checked to be JSON strings but not copied. A content with a
/// `\u` escape is decoded anyway, so that invalid escapes (lone surrogates)
/// are rejected whether or not the chunk is cited. `None` means "take the
/// slow path", which reports the error.
fn parse_fast(line: &[u8]) -> Option<BatchLine> {
    // SIMD validation: std's is several times slower on text with scattered
    // non-ASCII characters (curly quotes, dashes), and every byte passes here.
    let text = simdutf8::basic::from_utf8(line).ok()?;
    let lazy: LazyBatchLine<'_> = serde_json::from_str(text).ok()?;
    // A handful of IDs: a linear scan beats hashing them.
    let mut cited: Vec<&str> = Vec::new();
    for x in lazy.answer.claims.iter().flat_map(|c| &c.citations) {
        if !cited.contains(&x.chunk_id.as_str()) {
            cited.push(&x.chunk_id);
        }
    }
    let unicode_escape = memchr::memmem::Finder::new(b"\\u");
    let mut chunks = Vec::with_capacity(lazy.chunks.len());
    for c in lazy.chunks {
        let raw = c.content.get();
        if !raw.starts_with('"') {
            return None;
        }
        let content = if unicode_escape.find(raw.as_bytes()).is_some() {
            // serde_json decodes `\u` escapes and rejects lone surrogates.
            serde_json::from_str::<String>(raw).ok()?
        } else if cited.contains(&c.chunk_id.as_str()) {
            unescape_simple(raw)?
        } else {
            String::new()
        };
        chunks.push(Chunk {
            chunk_id: c.chunk_id,
            content,
            source_title: c.source_title,
            source_url: c.source_url,
            page_number: c.page_number,
            score: c.score,
        });
    }
    Some(BatchLine {
        question: lazy.question,
        chunks,
        answer: lazy.answer,
        trace_id: lazy.trace_id,
        model: lazy.model,
    })
}

/// Decodes a JSON string literal that serde_json has already checked and that
/// has no `\u` escape: the remaining escapes are one character each, so a
/// `memchr` over backslashes copies the text between them in bulk (about
/// twice as fast as decoding it again with serde_json). `None` on anything
/// unexpected, which sends the line to the slow path.
fn unescape_simple(raw: &str) -> Option<String> {
    let mut rest = raw.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::with_capacity(rest.len());
    while let Some(at) = memchr::memchr(b'\\', rest.as_bytes()) {
        out.push_str(&rest[..at]);
        out.push(match rest.as_bytes().get(at + 1)? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            _ => return None,
        });
        // The escape is two ASCII bytes: `at + 2` is a character boundary.
        rest = &rest[at + 2..];
    }
    out.push_str(rest);
    Some(out)
}

/// Parses a batch line that the fast path rejected, for a precise error;
/// `Ok(None)` for a blank line.
fn parse_slow(raw: &[u8], line_no: usize, name: &str) -> Result<Option<BatchLine>, BadInput> {
    let at_line = |mut e: BadInput| {
        e.line = Some(line_no);
        e
    };
    let text = std::str::from_utf8(raw).map_err(|e| {
        at_line(BadInput::new(
            name,
            format!("is not valid UTF-8 (byte {} of the line)", e.valid_up_to()),
        ))
    })?;
    let text = text.strip_suffix('\n').unwrap_or(text);
    let text = text.strip_suffix('\r').unwrap_or(text);
    if text.trim().is_empty() {
        return Ok(None);
    }
    input::parse_json(name, text).map(Some).map_err(at_line)
}

fn verify_line(
    line: BatchLine,
    line_no: usize,
    name: &str,
    rules: Rules,
    model: Option<&str>,
) -> Result<Contract, BadInput> {
    let at_line = |mut e: BadInput| {
        e.line = Some(line_no);
        e
    };
    let chunks = ChunkSet::new(line.chunks).map_err(|e| {
        at_line(BadInput {
            path: Some(format!(".chunks{}", e.path)),
            ..BadInput::new(name, e.message)
        })
    })?;
    if let Some(id) = &line.trace_id {
        validate_trace_id(id).map_err(|m| {
            at_line(BadInput {
                path: Some(".trace_id".into()),
                ..BadInput::new(name, m)
            })
        })?;
    }
    Ok(verify_with(
        &line.answer,
        &chunks,
        rules.profile,
        rules.policy,
        Provenance {
            trace_id: line.trace_id.unwrap_or_else(crate::new_trace_id),
            created_at: crate::now_rfc3339(),
            question: line.question,
            model: line.model.or_else(|| model.map(str::to_string)),
        },
    ))
}

/// Writes blocks in input order as they complete; returns the bad-line messages.
fn write_in_order(rx: Receiver<Done>) -> anyhow::Result<Vec<String>> {
    let mut out = BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    let mut pending = BTreeMap::new();
    let mut next = 0u64;
    let mut bad = Vec::new();
    for done in rx {
        pending.insert(done.seq, done);
        while let Some(d) = pending.remove(&next) {
            out.write_all(&d.output)
                .context("writing the batch output")?;
            bad.extend(d.bad);
            next += 1;
        }
    }
    out.flush().context("writing the batch output")?;
    Ok(bad)
}
