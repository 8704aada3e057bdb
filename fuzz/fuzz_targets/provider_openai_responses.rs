//! Arbitrary bytes as an OpenAI Responses API response (also Azure's v1
//! Responses route), whole or as a stream of events (the first byte
//! chooses; one event per line, an `event:` name taken from a line's text
//! before a tab), through the adapter's own decoder. Must not panic;
//! accepted output is JSON from a completed response, and the text deltas
//! add up to it.
#![no_main]

#[path = "shared/provider_decoder.rs"]
mod shared;

use groundcite_providers::responses;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((stream, rest)) = shared::split(data) else {
        return;
    };
    if stream {
        let lines = shared::events(rest);
        let events = lines.iter().map(|l| match l.split_once('\t') {
            Some((name, data)) => (Some(name), data),
            None => (None, l.as_str()),
        });
        let (deltas, result) = responses::decode_stream(events);
        shared::check(&result, Some(&deltas));
    } else {
        shared::check(&responses::decode_response(rest), None);
    }
});
