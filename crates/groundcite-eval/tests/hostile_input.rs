//! Suite and result files are user input: no bytes make the readers panic,
//! and a suite that is accepted is one the scorer can use.

#![allow(clippy::unwrap_used)]

use groundcite_eval::{EvalResult, Suite};
use proptest::prelude::*;

const SAMPLE: &str = include_str!("../../../eval/sample.toml");

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,400}") {
        let _ = Suite::from_toml(&text);
        let _ = Suite::from_json(&text);
        let _ = EvalResult::from_json(&text);
    }

    /// The sample suite with one byte range replaced: refused with a message,
    /// or accepted and internally consistent.
    #[test]
    fn mutated_suites_are_refused_or_consistent(
        at in 0usize..SAMPLE.len(),
        len in 0usize..40,
        with in "[\\PC\\n]{0,12}",
    ) {
        let bytes = SAMPLE.as_bytes();
        let end = (at + len).min(bytes.len());
        let mut m = bytes[..at].to_vec();
        m.extend_from_slice(with.as_bytes());
        m.extend_from_slice(&bytes[end..]);
        let Ok(text) = String::from_utf8(m) else { return Ok(()) };
        match Suite::from_toml(&text) {
            Err(e) => prop_assert!(!e.message.is_empty()),
            Ok(s) => {
                prop_assert!(s.validate().is_ok());
                prop_assert!(!s.cases.is_empty());
                let (cases, m) = groundcite_eval::score(&s, &[], &[]);
                prop_assert_eq!(cases.len(), s.cases.len());
                prop_assert_eq!(m.runs, 0);
            }
        }
    }
}
