//! Fresh trace IDs and the contract's `created_at`: one rule for the CLI
//! and the service.

/// A fresh trace ID: a UUID v7, sortable by time, within
/// [`validate_trace_id`](crate::validate_trace_id).
pub fn new_trace_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Now, RFC 3339 UTC to the millisecond (the contract's `created_at`).
pub fn now_rfc3339() -> String {
    let now = jiff::Timestamp::now();
    // Rounding a current timestamp to milliseconds cannot fail; fall back
    // to full precision all the same.
    now.round(jiff::Unit::Millisecond)
        .unwrap_or(now)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_ids_are_valid_and_times_are_to_the_millisecond() {
        assert!(crate::validate_trace_id(&new_trace_id()).is_ok());
        assert_ne!(new_trace_id(), new_trace_id());
        let t: jiff::Timestamp = now_rfc3339().parse().expect("RFC 3339");
        assert_eq!(t.subsec_nanosecond() % 1_000_000, 0);
    }
}
