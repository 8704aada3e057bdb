//! "Bare parse" reference for the batch benchmark (`bench/verify_batch.sh`).
//!
//! Reads a JSONL workload (one `{question, chunks, answer}` request per line),
//! parses every line with serde_json into the same input types the CLI uses,
//! and prints the number of lines parsed. Single-threaded; no verification,
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
    let mut line = String::new();
    let mut count: u64 = 0;
    let mut lineno: u64 = 0;
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                eprintln!("parse_only: {path}: {e}");
                return ExitCode::FAILURE;
            }
        }
        lineno += 1;
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Request>(&line) {
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
