//! Fresh trace IDs and `created_at`: the rule of `groundcite-store`'s
//! `ids.rs` (UUIDv7; RFC 3339 UTC to the millisecond), which the CLI and the
//! service share. Repeated here so that the wheel does not link the store's
//! SQLite and PostgreSQL drivers.

/// A fresh trace ID: a UUIDv7, sortable by time.
pub fn new_trace_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Now, RFC 3339 UTC to the millisecond.
pub fn now_rfc3339() -> String {
    let now = jiff::Timestamp::now();
    // Rounding a current timestamp to milliseconds cannot fail; fall back
    // to full precision all the same.
    now.round(jiff::Unit::Millisecond)
        .unwrap_or(now)
        .to_string()
}

/// The stamp of every batch.
pub const STAMP: groundcite_batch::Stamp = groundcite_batch::Stamp {
    trace_id: new_trace_id,
    created_at: now_rfc3339,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_ids_are_valid_and_times_are_to_the_millisecond() {
        assert!(groundcite_core::validate_trace_id(&new_trace_id()).is_ok());
        assert_ne!(new_trace_id(), new_trace_id());
        let t: jiff::Timestamp = now_rfc3339().parse().expect("RFC 3339");
        assert_eq!(t.subsec_nanosecond() % 1_000_000, 0);
    }
}
