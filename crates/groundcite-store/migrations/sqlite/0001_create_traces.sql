-- groundcite trace store, SQLite schema v1.
-- STRICT: no type affinity conversions; a column holds exactly what was bound.
-- JSON columns hold serialized JSON text; question and raw_output hold UTF-8
-- bytes (see src/record.rs, `Columns`).
CREATE TABLE groundcite_traces (
    trace_id            TEXT    NOT NULL PRIMARY KEY,
    created_at_ms       INTEGER NOT NULL,
    tenant              TEXT,
    kind                TEXT    NOT NULL,
    question            BLOB,
    chunks              TEXT    NOT NULL,
    prompt              TEXT,
    schema_hash         TEXT,
    raw_output          BLOB,
    contract            TEXT,
    warnings            TEXT    NOT NULL,
    provider            TEXT,
    model               TEXT,
    provider_request_id TEXT,
    options             TEXT    NOT NULL,
    timings             TEXT    NOT NULL,
    error               TEXT,
    answerable          INTEGER
) STRICT;

CREATE INDEX groundcite_traces_created_at ON groundcite_traces (created_at_ms);
CREATE INDEX groundcite_traces_tenant_created_at ON groundcite_traces (tenant, created_at_ms);
