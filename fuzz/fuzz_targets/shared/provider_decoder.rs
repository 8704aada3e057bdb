//! The body of the provider-decoder fuzz targets: arbitrary bytes as a
//! provider's whole response or as its stream of Server-Sent Events, split
//! where the first byte says. A decoder must never panic; what it accepts
//! is JSON (the one rule of `Output::json`) that ended with a natural stop;
//! what it refuses is classified, never a configuration error (nothing
//! about the request changes with the bytes).

use groundcite_providers::{ErrorKind, FinishReason, Generation, Output, ProviderError};

/// Checks one decoded outcome; `deltas` (streams only) must add up to the
/// output when the decoder handed any out.
pub fn check(result: &Result<Generation, ProviderError>, deltas: Option<&[String]>) {
    match result {
        Ok(g) => {
            let Output::Json(text) = &g.output else {
                panic!("a structured decoder returned native citations: {g:?}");
            };
            assert!(!text.trim().is_empty(), "blank output accepted");
            assert!(
                serde_json::from_str::<serde_json::Value>(text).is_ok(),
                "output that is not JSON accepted: {text:?}"
            );
            assert_eq!(g.finish_reason, Some(FinishReason::Stop));
            if let Some(d) = deltas.filter(|d| !d.is_empty()) {
                assert_eq!(&d.concat(), text, "the deltas differ from the output");
            }
        }
        Err(e) => {
            assert_ne!(e.kind(), ErrorKind::Config, "{e}");
            assert_ne!(e.kind(), ErrorKind::CircuitOpen, "{e}");
            // The Display is built from the bytes; it must exist.
            let _ = e.to_string();
        }
    }
}

/// `data` as (stream?, the rest): the first byte's low bit chooses.
pub fn split(data: &[u8]) -> Option<(bool, &[u8])> {
    let (first, rest) = data.split_first()?;
    Some((first & 1 == 1, rest))
}

/// The rest of a stream input as event data, one event per line (lossily
/// UTF-8, as the SSE reader yields text).
pub fn events(rest: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(rest)
        .split('\n')
        .map(str::to_string)
        .collect()
}
