//! Arbitrary bytes as an evaluation suite (TOML and JSON) and as a result
//! file for `--compare`. Must not panic; an accepted suite validates and
//! scores with no runs.
#![no_main]

use groundcite_eval::{EvalResult, Suite, score};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for suite in [Suite::from_toml(text), Suite::from_json(text)].into_iter().flatten() {
        assert!(suite.validate().is_ok());
        let (cases, metrics) = score(&suite, &[], &[]);
        assert_eq!(cases.len(), suite.cases.len());
        assert_eq!(metrics.runs, 0);
    }
    let _ = EvalResult::from_json(text);
});
