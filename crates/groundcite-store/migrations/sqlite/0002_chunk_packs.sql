-- Chunks leave the trace row. A trace's chunks that this process has not
-- stored in the last hour go into one new pack (a JSON array of chunk
-- texts); chunks it stored recently are referenced where they are. A trace
-- lists, per chunk in order, pack_id (8 bytes), index (4) and the SHA-256
-- of the chunk's text (32), checked on read. Rows are only ever appended
-- (no index on a random key). Rows written before this migration keep
-- their chunks in `chunks` and have chunk_refs NULL. last_used_ms drives
-- garbage collection at purge (see Store::purge_older_than). No
-- AUTOINCREMENT (its sequence table is one more write per pack): an ID
-- reused after a purge could only meet a reference that is already
-- dangling, and the hash check turns that into an error, never a wrong
-- chunk.
CREATE TABLE groundcite_chunk_packs (
    pack_id      INTEGER PRIMARY KEY,
    body         TEXT    NOT NULL,
    last_used_ms INTEGER NOT NULL
) STRICT;

CREATE INDEX groundcite_chunk_packs_last_used ON groundcite_chunk_packs (last_used_ms);

ALTER TABLE groundcite_traces ADD COLUMN chunk_refs BLOB;
