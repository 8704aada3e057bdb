//! Arbitrary bytes as a Google Gemini generateContent response (grounding metadata) over fixed chunks, through the one
//! dispatch `native::convert`. Must not panic; every citation names a
//! supplied chunk and keeps the verifier's invariant.
#![no_main]

#[path = "shared/native_channel.rs"]
mod shared;

use groundcite_core::native::NativeFormat;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| shared::run(NativeFormat::Gemini, data));
