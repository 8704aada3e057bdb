//! The store's one error type.

/// Everything that can go wrong opening or using a [`Store`](crate::Store).
///
/// No message ever contains a database password: URLs are shown through
/// [`redact_store_url`](crate::redact_store_url), and errors raised while connecting have
/// the password scrubbed from the driver's text.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The URL names no supported backend, or is malformed
    /// ([`Store::open`](crate::Store::open) lists the accepted forms).
    #[error("invalid store URL `{url}`: {reason}")]
    InvalidUrl {
        /// The URL, password redacted.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The database could not be created, reached or configured at open:
    /// missing directory permissions, refused connection, failed
    /// authentication, a filesystem where SQLite cannot use WAL.
    #[error("cannot open {backend} trace store `{url}`: {message}")]
    Open {
        /// `"sqlite"` or `"postgres"`.
        backend: &'static str,
        /// The URL, password redacted.
        url: String,
        /// What failed (the driver's message, password scrubbed).
        message: String,
    },
    /// The database was migrated by a newer groundcite than this one; it
    /// refuses to write to a schema it does not know.
    #[error(
        "trace store schema is at version {found}, newer than this build supports ({supported}); upgrade groundcite"
    )]
    SchemaTooNew {
        /// The highest migration recorded in the database.
        found: i64,
        /// The highest migration this build knows.
        supported: i64,
    },
    /// A trace id is empty, longer than 128 characters, or contains a
    /// character outside `[A-Za-z0-9._:-]`.
    #[error("invalid trace id {0:?}: expected 1 to 128 characters of [A-Za-z0-9._:-]")]
    InvalidTraceId(String),
    /// A record field cannot be stored as given (an empty `kind`, a NUL
    /// character in an identifier-like field, a timestamp out of range).
    #[error("invalid trace record: field `{field}` {reason}")]
    InvalidRecord {
        /// The offending field of [`TraceRecord`](crate::TraceRecord).
        field: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// [`Store::insert`](crate::Store::insert) was given a `trace_id` that is
    /// already stored. Nothing was written.
    #[error("trace {trace_id} already exists")]
    Duplicate {
        /// The id that is already taken.
        trace_id: String,
    },
    /// A stored row could not be decoded back into a record (edited by hand,
    /// or written by something other than this crate).
    #[error("stored trace {trace_id} is unreadable: {reason}")]
    Corrupt {
        /// The row's trace id.
        trace_id: String,
        /// Which column failed and why.
        reason: String,
    },
    /// The database failed a query after the store was open: I/O error, lost
    /// connection, pool timeout, disk full.
    #[error("trace store {operation} failed: {source}")]
    Database {
        /// What the store was doing (`"insert"`, `"get"`, `"migrate"`, …).
        operation: &'static str,
        /// The driver's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
}

impl StoreError {
    /// Wraps a driver error raised by `operation` on an open store.
    pub(crate) fn database(operation: &'static str, error: sqlx::Error) -> Self {
        StoreError::Database {
            operation,
            source: Box::new(error),
        }
    }
}
