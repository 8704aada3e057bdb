//! The public API: streamed batches and in-memory batches keep input order,
//! and report bad requests in place.

#![allow(clippy::unwrap_used)]

use std::io::{self, Read, Write};

use groundcite_batch::{
    BatchError, Options, Request, Stamp, verify_line, verify_many, verify_many_json, verify_stream,
};
use groundcite_core::{Chunk, GroundedAnswer};

fn fresh_id() -> String {
    "t-fresh".into()
}
fn fixed_time() -> String {
    "2026-01-01T00:00:00.000Z".into()
}
fn options(jobs: usize) -> Options {
    Options {
        jobs: Some(jobs),
        ..Options::new(Stamp {
            trace_id: fresh_id,
            created_at: fixed_time,
        })
    }
}

const GOOD: &str = r#"{"answerable": true, "claims": [{"text": "ok", "citations": [{"chunk_id": "c1", "quote": "REFUNDS are available"}]}]}"#;

fn line(i: usize) -> String {
    format!(
        r#"{{"question": "q{i}", "trace_id": "t-{i}", "chunks": [{{"chunk_id": "c1", "content": "Line {i}: refunds are available within 30 days."}}], "answer": {GOOD}}}"#
    )
}

fn request(i: usize) -> Request {
    serde_json::from_str(&line(i)).unwrap()
}

fn json_lines(bytes: &[u8]) -> Vec<serde_json::Value> {
    std::str::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn stream_keeps_order_and_marks_bad_lines_in_place() {
    let mut input = String::new();
    for i in 0..700 {
        match i {
            100 => input.push_str("{\"question\": \"broken\", \"chunks\": [}\n"),
            200 => input.push('\n'),
            _ => {
                input.push_str(&line(i));
                input.push('\n');
            }
        }
    }
    for jobs in [1, 3, 8] {
        let mut out = Vec::new();
        let summary = verify_stream(input.as_bytes(), &mut out, &options(jobs)).unwrap();
        assert_eq!(summary.verified, 698);
        assert_eq!(summary.blank, 1);
        assert_eq!(summary.bad.len(), 1);
        assert_eq!(
            summary.bad[0].located("b.jsonl").to_string(),
            "b.jsonl:101:35: at chunks[0]: expected value"
        );
        let lines = json_lines(&out);
        assert_eq!(lines.len(), 699);
        let mut expected = (0..700).filter(|&i| i != 200);
        for v in &lines {
            let i = expected.next().unwrap();
            if i == 100 {
                assert_eq!(
                    v,
                    &serde_json::json!({"error": {"code": "bad_input", "line": 101,
                        "path": "chunks[0]", "message": "expected value"}})
                );
            } else {
                assert_eq!(v["trace_id"], format!("t-{i}"), "jobs {jobs}");
                assert_eq!(v["answerable"], true);
            }
        }
    }
}

/// Many blocks, finished out of order by many workers, come out in order;
/// the last line may lack its newline.
#[test]
fn stream_keeps_order_across_blocks() {
    // About 3 MiB: several 1 MiB blocks.
    let n = 14_000;
    let input: String = (0..n).map(|i| line(i) + "\n").collect::<String>() + &line(n);
    let mut out = Vec::new();
    let summary = verify_stream(input.as_bytes(), &mut out, &options(6)).unwrap();
    assert_eq!(summary.verified, n as u64 + 1);
    let lines = json_lines(&out);
    assert_eq!(lines.len(), n + 1);
    for (i, v) in lines.iter().enumerate() {
        assert_eq!(v["trace_id"], format!("t-{i}"));
    }
}

/// A reader that fails after some bytes.
struct Failing<'a> {
    data: &'a [u8],
}

impl Read for Failing<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.data.is_empty() {
            return Err(io::Error::other("disk on fire"));
        }
        let n = buf.len().min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

#[test]
fn a_read_error_stops_the_batch_with_its_line() {
    let input = format!("{}\n{}\n", line(0), line(1));
    let reader = Failing {
        data: input.as_bytes(),
    };
    let mut out = Vec::new();
    let err = verify_stream(reader, &mut out, &options(2)).unwrap_err();
    match err {
        BatchError::Read { line, source } => {
            assert_eq!(line, 1);
            assert_eq!(source.to_string(), "disk on fire");
        }
        other => panic!("{other:?}"),
    }
}

/// A writer whose reader went away (`| head -1`).
struct ClosedPipe;

impl Write for ClosedPipe {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::Error::from(io::ErrorKind::BrokenPipe))
    }
    fn flush(&mut self) -> io::Result<()> {
        Err(io::Error::from(io::ErrorKind::BrokenPipe))
    }
}

/// A failed write stops everything, however much input is left, rather than
/// leave the reader blocked on a full queue.
#[test]
fn a_write_error_stops_the_batch() {
    let n = 40_000; // ~9 MiB: many more blocks than the queues hold.
    let input: String = (0..n).map(|i| line(i) + "\n").collect();
    let err = verify_stream(input.as_bytes(), ClosedPipe, &options(2)).unwrap_err();
    match err {
        BatchError::Write(e) => assert_eq!(e.kind(), io::ErrorKind::BrokenPipe),
        other => panic!("{other:?}"),
    }
}

#[test]
fn verify_many_keeps_input_order() {
    let items: Vec<Request> = (0..300).map(request).collect();
    for jobs in [1, 4, 16] {
        let results = verify_many(items.clone(), &options(jobs));
        assert_eq!(results.len(), 300);
        for (i, r) in results.iter().enumerate() {
            let c = r.as_ref().unwrap();
            assert_eq!(c.trace_id, format!("t-{i}"), "jobs {jobs}");
            assert_eq!(c.question.as_deref(), Some(format!("q{i}").as_str()));
        }
    }
    assert!(verify_many(Vec::new(), &options(4)).is_empty());
}

#[test]
fn verify_many_reports_bad_items_in_place() {
    let mut items: Vec<Request> = (0..50).map(request).collect();
    items[7].trace_id = Some("not a trace id".into());
    let first = items[20].chunks[0].clone();
    items[20].chunks.push(first);
    items[33].chunks = vec![Chunk {
        chunk_id: String::new(),
        ..items[33].chunks[0].clone()
    }];
    items[40].trace_id = None;
    items[40].model = None;
    items[40].answer = GroundedAnswer {
        answerable: false,
        ..items[40].answer.clone()
    };
    let mut o = options(4);
    o.model = Some("m-default".into());
    let results = verify_many(items, &o);
    for (i, r) in results.iter().enumerate() {
        match i {
            7 => {
                let e = r.as_ref().unwrap_err();
                assert_eq!((e.line, e.path.as_deref()), (8, Some(".trace_id")));
            }
            20 => {
                let e = r.as_ref().unwrap_err();
                assert_eq!(
                    (e.line, e.path.as_deref()),
                    (21, Some(".chunks[1].chunk_id"))
                );
                assert!(e.message.starts_with("duplicate chunk_id"), "{e}");
            }
            33 => {
                let e = r.as_ref().unwrap_err();
                assert_eq!(
                    (e.line, e.path.as_deref()),
                    (34, Some(".chunks[0].chunk_id"))
                );
            }
            40 => {
                let c = r.as_ref().unwrap();
                assert_eq!(c.trace_id, "t-fresh");
                assert_eq!(c.model.as_deref(), Some("m-default"));
                assert_eq!(c.created_at, "2026-01-01T00:00:00.000Z");
            }
            _ => assert_eq!(r.as_ref().unwrap().trace_id, format!("t-{i}")),
        }
    }
}

#[test]
fn verify_many_json_matches_verify_line() {
    let mut docs: Vec<Vec<u8>> = (0..120).map(|i| line(i).into_bytes()).collect();
    docs[5] = b"{\"chunks\": [}".to_vec();
    docs[9] = b"   ".to_vec();
    docs[11] = b"{\"chunks\": []}\xff".to_vec();
    let o = options(5);
    let results = verify_many_json(&docs, &o);
    assert_eq!(results.len(), docs.len());
    for (i, (doc, r)) in docs.iter().zip(&results).enumerate() {
        assert_eq!(r, &verify_line(doc, i + 1, &o), "item {i}");
        match i {
            5 | 11 => assert_eq!(r.as_ref().unwrap_err().line, i + 1),
            9 => assert_eq!(r, &Ok(None)),
            _ => assert_eq!(
                r.as_ref().unwrap().as_ref().unwrap().trace_id,
                format!("t-{i}")
            ),
        }
    }
}

/// Contracts from the three entry points are the same.
#[test]
fn the_entry_points_agree() {
    let o = options(3);
    let input: String = (0..40).map(|i| line(i) + "\n").collect();
    let mut streamed = Vec::new();
    verify_stream(input.as_bytes(), &mut streamed, &o).unwrap();
    let many: Vec<u8> = verify_many((0..40).map(request).collect(), &o)
        .into_iter()
        .flat_map(|r| {
            let mut v = serde_json::to_vec(&r.unwrap()).unwrap();
            v.push(b'\n');
            v
        })
        .collect();
    assert_eq!(
        String::from_utf8(streamed).unwrap(),
        String::from_utf8(many).unwrap()
    );
}
