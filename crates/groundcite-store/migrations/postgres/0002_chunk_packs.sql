-- Chunks leave the trace row. A trace's chunks that this process has not
-- stored in the last hour go into one new pack (a JSON array of chunk
-- texts); chunks it stored recently are referenced where they are. A trace
-- lists, per chunk in order, pack_id (8 bytes), index (4) and the SHA-256
-- of the chunk's text (32), checked on read. Rows are only ever appended
-- (no index on a random key). Rows written before this migration keep
-- their chunks in `chunks` and have chunk_refs NULL. last_used_ms drives
-- garbage collection at purge (see Store::purge_older_than).
CREATE TABLE groundcite_chunk_packs (
    pack_id      BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    body         TEXT    NOT NULL,
    last_used_ms BIGINT  NOT NULL
);

CREATE INDEX groundcite_chunk_packs_last_used ON groundcite_chunk_packs (last_used_ms);

ALTER TABLE groundcite_traces ADD COLUMN chunk_refs BYTEA;
