//! JSON Lines in, JSON Lines out: reader → workers → ordered writer, with
//! bounded channels so that memory stays constant whatever the input size.

use std::collections::BTreeMap;
use std::io::{BufWriter, Read, Write};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

use crate::{BatchError, LineError, Options, verify_line};

/// Bytes per unit of work (whole lines; a longer line makes a longer block):
/// large enough to amortise channel traffic, small enough to keep memory
/// constant.
const BLOCK_BYTES: usize = 1 << 20;
/// Bytes asked of the input per read.
const READ_BYTES: usize = 256 << 10;

/// What a streamed batch did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Lines verified into a contract.
    pub verified: u64,
    /// Blank lines, skipped (no output).
    pub blank: u64,
    /// Bad lines, in input order; each has an error object in its place in
    /// the output.
    pub bad: Vec<LineError>,
}

/// Whole lines of input (each ending in `\n`, but possibly the input's last).
struct Block {
    seq: u64,
    first_line: usize,
    bytes: Vec<u8>,
}

struct Done {
    seq: u64,
    output: Vec<u8>,
    verified: u64,
    blank: u64,
    bad: Vec<LineError>,
}

/// Verifies JSON Lines of [`crate::Request`]s read from `input` and writes,
/// for each non-blank line and in input order, its contract or its error
/// object ([`LineError::to_json`]) as one line of JSON to `output`
/// (buffered here, and flushed at the end).
///
/// [`Options::threads`] workers verify blocks of about 1 MiB of whole lines
/// while one thread reads and the calling thread writes; `input` is read in
/// large reads, so it needs no buffering of its own. Bad lines do not stop
/// the batch: they are counted in the [`Summary`]. A failed read or write
/// does, with a [`BatchError`]; output already written stays written.
pub fn verify_stream<R: Read + Send, W: Write>(
    input: R,
    output: W,
    options: &Options,
) -> Result<Summary, BatchError> {
    stream_blocks(input, output, options, BLOCK_BYTES)
}

pub(crate) fn stream_blocks<R: Read + Send, W: Write>(
    input: R,
    output: W,
    options: &Options,
    block_bytes: usize,
) -> Result<Summary, BatchError> {
    let jobs = options.threads();
    let (work_tx, work_rx) = sync_channel::<Block>(jobs * 2);
    let work_rx = Arc::new(Mutex::new(work_rx));
    let (done_tx, done_rx) = sync_channel::<Done>(jobs * 2);

    std::thread::scope(move |s| {
        let reader = s.spawn(move || read_blocks(input, work_tx, block_bytes));
        for _ in 0..jobs {
            let rx = Arc::clone(&work_rx);
            let tx = done_tx.clone();
            s.spawn(move || worker(&rx, &tx, options));
        }
        // Only the workers hold the ends that they use: when the writer
        // stops (a closed pipe), they stop, and then so does the reader.
        drop(work_rx);
        drop(done_tx);
        let summary = write_in_order(done_rx, output)?;
        reader.join().map_err(|_| BatchError::ReaderPanicked)??;
        Ok(summary)
    })
}

fn read_blocks<R: Read>(
    mut reader: R,
    tx: SyncSender<Block>,
    block_bytes: usize,
) -> Result<(), BatchError> {
    let mut seq = 0;
    let mut first_line = 1;
    let mut carry: Vec<u8> = Vec::new();
    let mut eof = false;
    while !eof || !carry.is_empty() {
        let mut buf = std::mem::take(&mut carry);
        buf.reserve(block_bytes);
        let mut has_newline = memchr::memchr(b'\n', &buf).is_some();
        // Fill up to a block, and past it until a line ends (long lines).
        while !eof && (buf.len() < block_bytes || !has_newline) {
            let old = buf.len();
            // `read_to_end` reads into spare capacity without zeroing it
            // first; through `take` it stops after READ_BYTES, short only at
            // the end of the input.
            let n = (&mut reader)
                .take(READ_BYTES as u64)
                .read_to_end(&mut buf)
                .map_err(|source| BatchError::Read {
                    line: first_line,
                    source,
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

fn worker(rx: &Mutex<Receiver<Block>>, tx: &SyncSender<Done>, options: &Options) {
    loop {
        // A poisoned lock means another worker panicked; stop quietly.
        let block = match rx.lock() {
            Ok(guard) => guard.recv(),
            Err(_) => return,
        };
        let Ok(block) = block else { return };
        let mut done = Done {
            seq: block.seq,
            output: Vec::with_capacity(block.bytes.len() / 2),
            verified: 0,
            blank: 0,
            bad: Vec::new(),
        };
        let mut start = 0;
        let ends = memchr::memchr_iter(b'\n', &block.bytes).map(|p| p + 1);
        let ends = ends.chain((!block.bytes.ends_with(b"\n")).then_some(block.bytes.len()));
        for (i, end) in ends.enumerate() {
            let raw = &block.bytes[start..end];
            start = end;
            match verify_line(raw, block.first_line + i, options) {
                Ok(None) => done.blank += 1,
                Ok(Some(contract)) => {
                    // Serializing our own types into a Vec cannot fail.
                    let _ = serde_json::to_writer(&mut done.output, &contract);
                    done.output.push(b'\n');
                    done.verified += 1;
                }
                Err(e) => {
                    let _ = serde_json::to_writer(&mut done.output, &e.to_json());
                    done.output.push(b'\n');
                    done.bad.push(e);
                }
            }
        }
        if tx.send(done).is_err() {
            return;
        }
    }
}

/// Writes blocks in input order as they complete.
fn write_in_order<W: Write>(rx: Receiver<Done>, output: W) -> Result<Summary, BatchError> {
    let mut out = BufWriter::with_capacity(1 << 20, output);
    let mut pending = BTreeMap::new();
    let mut next = 0u64;
    let mut summary = Summary::default();
    for done in rx {
        pending.insert(done.seq, done);
        while let Some(d) = pending.remove(&next) {
            out.write_all(&d.output).map_err(BatchError::Write)?;
            summary.verified += d.verified;
            summary.blank += d.blank;
            summary.bad.extend(d.bad);
            next += 1;
        }
    }
    out.flush().map_err(BatchError::Write)?;
    Ok(summary)
}
