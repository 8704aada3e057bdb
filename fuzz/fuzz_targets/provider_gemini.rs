//! Arbitrary bytes as a Gemini `generateContent` response, whole or as a
//! `streamGenerateContent?alt=sse` stream (the first byte chooses; one
//! event per line), through the adapter's own decoder. Must not panic;
//! accepted output is JSON after finishReason STOP, and a stream's text
//! deltas add up to it.
#![no_main]

#[path = "shared/provider_decoder.rs"]
mod shared;

use groundcite_providers::gemini;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((stream, rest)) = shared::split(data) else {
        return;
    };
    if stream {
        let events = shared::events(rest);
        let (deltas, result) = gemini::decode_stream(events.iter().map(String::as_str));
        shared::check(&result, Some(&deltas));
        // Every text part is handed out as it comes.
        if let Ok(g) = &result
            && let groundcite_providers::Output::Json(text) = &g.output
        {
            assert_eq!(&deltas.concat(), text);
        }
    } else {
        shared::check(&gemini::decode_response(rest), None);
    }
});
