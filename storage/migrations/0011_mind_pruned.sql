-- Porfiry schema version 11: the memory forgets what it no longer needs
-- (issue 45, HMP's soft delete: a deletion is kept for a time to live,
-- then gone).
--
-- `mind_pruned`: for each record some of whose versions were pruned here
-- (`Store::prune_mind`: a winning tombstone and every version it beat, or
-- a version dominated by one written more than `TOMBSTONE_TTL_MS` ago),
-- what was forgotten: the pruned versions' vectors merged (`vv`), and for
-- a record whose deletion was forgotten, the tombstone's rank in the merge
-- rule (`deleted_at`, `deleted_by`, `deleted_id`: its writer's clock,
-- author and item id). A device away longer than the time to live offers
-- the old versions again in range sync; an arriving version whose vector
-- this one covers (`Before` or `Equal`) is one pruning forgot or would
-- forget at once, and is refused, as is a version written apart from a
-- forgotten deletion that would have lost to it: a deleted record never
-- comes back. One row per record (never per version), and a record keeps
-- its `mind_records` row for ever already, deleted or not: this table is
-- at most as long as that one, and a row's vector is bounded by the
-- protocol's 32 devices.

CREATE TABLE mind_pruned (
    key        BLOB    PRIMARY KEY CHECK (length(key) = 16),
    vv         TEXT    NOT NULL CHECK (json_valid(vv)),            -- every pruned version's vector, merged
    deleted_at INTEGER,                                            -- the forgotten deletion's at_ms; NULL while the record lives
    deleted_by TEXT,                                               -- its author's peer id
    deleted_id BLOB    CHECK (deleted_id IS NULL OR length(deleted_id) = 32),  -- its item id
    CHECK ((deleted_at IS NULL) = (deleted_by IS NULL) AND (deleted_at IS NULL) = (deleted_id IS NULL))
) WITHOUT ROWID;
