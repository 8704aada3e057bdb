//! "Bare parse" reference for the batch benchmark (`bench/verify_batch.sh`).
//!
//! Reads a JSONL workload (one `{question, chunks, answer}` request per line),
//! validates each line as UTF-8 with the same SIMD validator as the CLI
//! (simdutf8), parses it with serde_json into the same input types the CLI
//! uses (every chunk content decoded into a `String`), and prints the number
//! of lines parsed. Single-threaded; no verification,
//! no output per line: the floor that `groundcite verify --batch` is measured
//! against.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::process::ExitCode;

use groundcite_core::{Chunk, GroundedAnswer};
use serde::Deserialize;

/// One batch request, as `groundcite verify --batch` reads it.
#[derive(Debug, Deserialize)]
#[allow(dead_code)] // fields are parsed, not used
struct Request {
    question: Option<String>,
    chunks: Vec<Chunk>,
    answer: GroundedAnswer,
}

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: parse_only WORKLOAD.jsonl");
        return ExitCode::from(2);
    };
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("parse_only: {path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut line = Vec::new();
    let mut count: u64 = 0;
    let mut lineno: u64 = 0;
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                eprintln!("parse_only: {path}: {e}");
                return ExitCode::FAILURE;
            }
        }
        lineno += 1;
        let Ok(text) = simdutf8::basic::from_utf8(&line) else {
            eprintln!("parse_only: {path}:{lineno}: not valid UTF-8");
            return ExitCode::FAILURE;
        };
        if text.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Request>(text) {
            Ok(req) => {
                std::hint::black_box(&req);
                count += 1;
            }
            Err(e) => {
                eprintln!("parse_only: {path}:{lineno}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    println!("{count}");
    ExitCode::SUCCESS
}
