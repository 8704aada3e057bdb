//! Batch verification for groundcite: many requests (an answer and the chunks
//! it was given), each verified with [`groundcite_core::verify_with`], the
//! results kept in input order, the work spread over std threads.
//!
//! This crate holds what `groundcite verify --batch` does, without the CLI:
//! it depends on `groundcite-core`, serde and a few small parsing crates, not
//! on the embedded model, the search index, an async runtime or the AWS SDK.
//!
//! Three ways in, one rule:
//!
//! - [`verify_line`] verifies one line of a batch file (JSON bytes of a
//!   [`Request`]). A fast parser that decodes only the chunk contents the
//!   answer cites comes first; a line it rejects is parsed again with path
//!   tracking, so that the [`LineError`] names the JSON path.
//!   [`verify_request`] verifies a request already parsed.
//! - [`verify_stream`] reads JSON Lines from any [`std::io::Read`] (a
//!   [`std::io::BufRead`] too) and writes one contract, or one error object,
//!   per non-blank line to a [`std::io::Write`], in input order, with
//!   [`Options::jobs`] worker threads and constant memory. It returns a
//!   [`Summary`], or a [`BatchError`] when reading or writing fails.
//! - [`verify_many`] (typed requests) and [`verify_many_json`] (JSON
//!   documents) verify a batch held in memory, in parallel, and return one
//!   result per item, in input order.
//!
//! [`Options`] carries the verification rules (matching profile, claim
//! policy), the default model, the number of threads and a [`Stamp`]: the
//! functions that make a fresh trace ID and the current time, which this
//! crate leaves to its caller.

mod error;
mod line;
mod many;
mod options;
mod stream;

pub use error::{BatchError, LineError, Located};
pub use line::{Request, verify_line, verify_request};
pub use many::{verify_many, verify_many_json};
pub use options::{Options, Stamp};
pub use stream::{Summary, verify_stream};
