-- groundcite trace store, PostgreSQL schema v1.
-- JSON columns are TEXT, not JSONB: the stored text is exactly what was
-- serialized (JSONB would reorder keys and respell numbers). Query them with
-- a cast, e.g. `contract::jsonb ->> 'answerable'`. question and raw_output
-- are BYTEA holding UTF-8, because TEXT cannot hold U+0000
-- (`convert_from(raw_output, 'UTF8')` reads them when they hold no NUL).
CREATE TABLE groundcite_traces (
    trace_id            TEXT    NOT NULL PRIMARY KEY,
    created_at_ms       BIGINT  NOT NULL,
    tenant              TEXT,
    kind                TEXT    NOT NULL,
    question            BYTEA,
    chunks              TEXT    NOT NULL,
    prompt              TEXT,
    schema_hash         TEXT,
    raw_output          BYTEA,
    contract            TEXT,
    warnings            TEXT    NOT NULL,
    provider            TEXT,
    model               TEXT,
    provider_request_id TEXT,
    options             TEXT    NOT NULL,
    timings             TEXT    NOT NULL,
    error               TEXT,
    answerable          BOOLEAN
);

CREATE INDEX groundcite_traces_created_at ON groundcite_traces (created_at_ms);
CREATE INDEX groundcite_traces_tenant_created_at ON groundcite_traces (tenant, created_at_ms);
