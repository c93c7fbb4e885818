-- Porfiry schema version 10: a person's devices share one long-term memory
-- (issue 45).
--
-- 1. `invitations.kind`: an invitation makes a friend (`porfiry invite`) or
--    links a device of the same person (`porfiry devices link`).
-- 2. `device_links`: every device link and unlink statement held, written by
--    `Store::insert_items` in the same transaction as its `device_link` item
--    (like `club_changes`); the device book is rebuilt from them.
-- 3. `mind_records`: the replicated identity of a long-term memory row: its
--    16-byte key (the same on every device) and where it lives here. A
--    deleted row keeps its record (the tombstone is the winning version).
-- 4. `mind_versions`: every version of a record held (one `mind_record`
--    item each), with its version vector, for the merge rule.
-- 5. `mind_conflicts`: versions written apart whose texts differ, each
--    waiting for the node to make the core a task naming both.
-- 6. `mind_outbox`: what changed here since it was last published, filled
--    by triggers so every writer — the core, the CLI, the API, another
--    process — is seen: one write entry per changed row (so bounded by the
--    tables' sizes), and one deletion entry per deleted record, holding the
--    record's key, taken from `mind_records` at the moment of deletion (the
--    row's id may be reused by a new row before the deletion is published;
--    the new row is a new record). Each entry keeps `seen`, how many of the
--    record's versions this device held when the row first changed, so the
--    version it becomes succeeds exactly those: one that arrives before it
--    is published is concurrent with it, never silently overwritten (and a
--    received version is not written into a row with a change waiting
--    here; publishing settles it). (An `OR REPLACE` or `OR IGNORE` inside a
--    trigger takes the outer statement's conflict policy, so the triggers
--    test for an existing entry instead.) A received version is applied with
--    `mind_applying` holding a row, which the triggers skip, so it is not
--    published back.

-- 0. `items` takes the audience `devices` (the table is rebuilt: a CHECK
--    cannot be altered in place).
CREATE TABLE items_v10 (
    id            BLOB    PRIMARY KEY CHECK (length(id) = 32),    -- SHA-256 of the envelope
    author        TEXT    NOT NULL,                                -- peer id
    kind          TEXT    NOT NULL,                                -- note, rating, retraction, ...
    audience      TEXT    NOT NULL CHECK (audience IN ('public', 'friends', 'devices')
                                          OR audience GLOB 'group:?*' OR audience GLOB 'peer:?*'
                                          OR audience GLOB 'club:?*@?*'),
    created       INTEGER NOT NULL,                                -- author's clock, Unix ms
    expires       INTEGER,
    payload       BLOB    NOT NULL,
    signature     BLOB    NOT NULL,
    received_from TEXT,                                            -- NULL for our own items
    max_hops      INTEGER NOT NULL CHECK (max_hops BETWEEN 0 AND 255),  -- the author's limit
    hops_left     INTEGER NOT NULL CHECK (hops_left BETWEEN 0 AND max_hops),
    retracts      BLOB    CHECK (length(retracts) = 32),          -- a retraction's target
    replaces      BLOB    CHECK (length(replaces) = 32),          -- the earlier item this one supersedes
    club_target   TEXT,                                            -- a club change's member (peer id)
    club_removal  INTEGER NOT NULL DEFAULT 0 CHECK (club_removal IN (0, 1))  -- it ends a membership
);
INSERT INTO items_v10 SELECT id, author, kind, audience, created, expires, payload, signature,
                             received_from, max_hops, hops_left, retracts, replaces,
                             club_target, club_removal
    FROM items;
DROP TABLE items;
ALTER TABLE items_v10 RENAME TO items;
CREATE INDEX items_created ON items (created, id);

ALTER TABLE invitations ADD COLUMN kind TEXT NOT NULL DEFAULT 'friend'
    CHECK (kind IN ('friend', 'device'));

CREATE TABLE device_links (
    item_id  BLOB    PRIMARY KEY CHECK (length(item_id) = 32),  -- the device_link item
    action   TEXT    NOT NULL CHECK (action IN ('link', 'unlink')),
    a        TEXT    NOT NULL,                                    -- peer id (for unlink: who ended it)
    b        TEXT    NOT NULL,                                    -- peer id (for unlink: the other side)
    at_ms    INTEGER NOT NULL,                                    -- since_ms of a link, at_ms of an unlink
    author   TEXT    NOT NULL                                     -- the item's author
) WITHOUT ROWID;

CREATE TABLE mind_records (
    key      BLOB    PRIMARY KEY CHECK (length(key) = 16),
    tbl      TEXT    NOT NULL CHECK (tbl IN ('diary', 'concept', 'link', 'goal', 'task', 'llm_memory')),
    local_id INTEGER,                                             -- the row here; NULL while deleted
    winner   BLOB    CHECK (winner IS NULL OR length(winner) = 32),  -- the winning version's item id
    origin   TEXT    NOT NULL,                                    -- the device that created it
    waiting  INTEGER NOT NULL DEFAULT 0 CHECK (waiting IN (0, 1))  -- the winner refers to a record not here yet
) WITHOUT ROWID;
CREATE INDEX mind_records_local ON mind_records (tbl, local_id);
CREATE INDEX mind_records_waiting ON mind_records (key) WHERE waiting = 1;

CREATE TABLE mind_versions (
    item_id  BLOB    PRIMARY KEY CHECK (length(item_id) = 32),
    key      BLOB    NOT NULL CHECK (length(key) = 16),
    author   TEXT    NOT NULL,
    at_ms    INTEGER NOT NULL,
    vv       TEXT    NOT NULL CHECK (json_valid(vv)),             -- the version vector, JSON {device: counter}
    deleted  INTEGER NOT NULL CHECK (deleted IN (0, 1)),
    digest   BLOB    NOT NULL CHECK (length(digest) = 32),        -- SHA-256 of the fields, for conflicts
    seq      INTEGER NOT NULL                                     -- arrival order within the record
) WITHOUT ROWID;
CREATE INDEX mind_versions_key ON mind_versions (key, seq);

CREATE TABLE mind_conflicts (
    key      BLOB    PRIMARY KEY CHECK (length(key) = 16),        -- the conflict task record's key
    record   BLOB    NOT NULL CHECK (length(record) = 16),        -- the record in conflict
    a        BLOB    NOT NULL CHECK (length(a) = 32),             -- one version's item id
    b        BLOB    NOT NULL CHECK (length(b) = 32),             -- the other's
    task_id  INTEGER                                              -- the task made for it; NULL until made
) WITHOUT ROWID;
CREATE INDEX mind_conflicts_open ON mind_conflicts (key) WHERE task_id IS NULL;

CREATE TABLE mind_outbox (
    seq      INTEGER PRIMARY KEY,
    tbl      TEXT    NOT NULL,
    local_id INTEGER NOT NULL,                                    -- the row (for a deletion: the row it was)
    key      BLOB    CHECK (key IS NULL OR length(key) = 16),     -- a deletion's record; NULL for a write
    seen     INTEGER NOT NULL DEFAULT 0                           -- the record's versions held when it changed (mind_versions.seq)
);
CREATE UNIQUE INDEX mind_outbox_writes ON mind_outbox (tbl, local_id) WHERE key IS NULL;
CREATE UNIQUE INDEX mind_outbox_deletions ON mind_outbox (key) WHERE key IS NOT NULL;
-- The publisher reads a table's entries in order: without it each batch of
-- 256 scanned the whole outbox six times (a first link's 50,000 entries).
CREATE INDEX mind_outbox_order ON mind_outbox (tbl, seq);

CREATE TABLE mind_applying (
    one INTEGER PRIMARY KEY CHECK (one = 1)
);

CREATE TRIGGER mind_diary_write AFTER INSERT ON diary_entries
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying)
    BEGIN
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'diary', NEW.id, NULL, (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'diary' AND r.local_id = NEW.id)
            WHERE NOT EXISTS (SELECT 1 FROM mind_outbox WHERE tbl = 'diary' AND local_id = NEW.id AND key IS NULL);
    END;
CREATE TRIGGER mind_diary_edit AFTER UPDATE ON diary_entries
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying)
    BEGIN
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'diary', NEW.id, NULL, (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'diary' AND r.local_id = NEW.id)
            WHERE NOT EXISTS (SELECT 1 FROM mind_outbox WHERE tbl = 'diary' AND local_id = NEW.id AND key IS NULL);
    END;
CREATE TRIGGER mind_diary_delete AFTER DELETE ON diary_entries
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying)
    BEGIN
        DELETE FROM mind_outbox WHERE key IN
            (SELECT key FROM mind_records WHERE tbl = 'diary' AND local_id = OLD.id);
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'diary', OLD.id, key, COALESCE(
                (SELECT seen FROM mind_outbox WHERE tbl = 'diary' AND local_id = OLD.id AND key IS NULL),
                (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'diary' AND r.local_id = OLD.id))
            FROM mind_records WHERE tbl = 'diary' AND local_id = OLD.id;
        DELETE FROM mind_outbox WHERE tbl = 'diary' AND local_id = OLD.id AND key IS NULL;
        UPDATE mind_records SET local_id = NULL WHERE tbl = 'diary' AND local_id = OLD.id;
    END;

CREATE TRIGGER mind_concept_write AFTER INSERT ON concepts
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying)
    BEGIN
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'concept', NEW.id, NULL, (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'concept' AND r.local_id = NEW.id)
            WHERE NOT EXISTS (SELECT 1 FROM mind_outbox WHERE tbl = 'concept' AND local_id = NEW.id AND key IS NULL);
    END;
CREATE TRIGGER mind_concept_edit AFTER UPDATE ON concepts
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying)
    BEGIN
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'concept', NEW.id, NULL, (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'concept' AND r.local_id = NEW.id)
            WHERE NOT EXISTS (SELECT 1 FROM mind_outbox WHERE tbl = 'concept' AND local_id = NEW.id AND key IS NULL);
    END;
CREATE TRIGGER mind_concept_delete AFTER DELETE ON concepts
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying)
    BEGIN
        DELETE FROM mind_outbox WHERE key IN
            (SELECT key FROM mind_records WHERE tbl = 'concept' AND local_id = OLD.id);
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'concept', OLD.id, key, COALESCE(
                (SELECT seen FROM mind_outbox WHERE tbl = 'concept' AND local_id = OLD.id AND key IS NULL),
                (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'concept' AND r.local_id = OLD.id))
            FROM mind_records WHERE tbl = 'concept' AND local_id = OLD.id;
        DELETE FROM mind_outbox WHERE tbl = 'concept' AND local_id = OLD.id AND key IS NULL;
        UPDATE mind_records SET local_id = NULL WHERE tbl = 'concept' AND local_id = OLD.id;
    END;

CREATE TRIGGER mind_link_write AFTER INSERT ON links
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying)
    BEGIN
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'link', NEW.id, NULL, (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'link' AND r.local_id = NEW.id)
            WHERE NOT EXISTS (SELECT 1 FROM mind_outbox WHERE tbl = 'link' AND local_id = NEW.id AND key IS NULL);
    END;
CREATE TRIGGER mind_link_edit AFTER UPDATE ON links
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying)
    BEGIN
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'link', NEW.id, NULL, (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'link' AND r.local_id = NEW.id)
            WHERE NOT EXISTS (SELECT 1 FROM mind_outbox WHERE tbl = 'link' AND local_id = NEW.id AND key IS NULL);
    END;
CREATE TRIGGER mind_link_delete AFTER DELETE ON links
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying)
    BEGIN
        DELETE FROM mind_outbox WHERE key IN
            (SELECT key FROM mind_records WHERE tbl = 'link' AND local_id = OLD.id);
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'link', OLD.id, key, COALESCE(
                (SELECT seen FROM mind_outbox WHERE tbl = 'link' AND local_id = OLD.id AND key IS NULL),
                (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'link' AND r.local_id = OLD.id))
            FROM mind_records WHERE tbl = 'link' AND local_id = OLD.id;
        DELETE FROM mind_outbox WHERE tbl = 'link' AND local_id = OLD.id AND key IS NULL;
        UPDATE mind_records SET local_id = NULL WHERE tbl = 'link' AND local_id = OLD.id;
    END;

CREATE TRIGGER mind_goal_write AFTER INSERT ON goals
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying)
    BEGIN
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'goal', NEW.id, NULL, (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'goal' AND r.local_id = NEW.id)
            WHERE NOT EXISTS (SELECT 1 FROM mind_outbox WHERE tbl = 'goal' AND local_id = NEW.id AND key IS NULL);
    END;
CREATE TRIGGER mind_goal_edit AFTER UPDATE ON goals
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying)
    BEGIN
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'goal', NEW.id, NULL, (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'goal' AND r.local_id = NEW.id)
            WHERE NOT EXISTS (SELECT 1 FROM mind_outbox WHERE tbl = 'goal' AND local_id = NEW.id AND key IS NULL);
    END;
CREATE TRIGGER mind_goal_delete AFTER DELETE ON goals
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying)
    BEGIN
        DELETE FROM mind_outbox WHERE key IN
            (SELECT key FROM mind_records WHERE tbl = 'goal' AND local_id = OLD.id);
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'goal', OLD.id, key, COALESCE(
                (SELECT seen FROM mind_outbox WHERE tbl = 'goal' AND local_id = OLD.id AND key IS NULL),
                (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'goal' AND r.local_id = OLD.id))
            FROM mind_records WHERE tbl = 'goal' AND local_id = OLD.id;
        DELETE FROM mind_outbox WHERE tbl = 'goal' AND local_id = OLD.id AND key IS NULL;
        UPDATE mind_records SET local_id = NULL WHERE tbl = 'goal' AND local_id = OLD.id;
    END;

CREATE TRIGGER mind_task_write AFTER INSERT ON tasks
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying)
    BEGIN
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'task', NEW.id, NULL, (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'task' AND r.local_id = NEW.id)
            WHERE NOT EXISTS (SELECT 1 FROM mind_outbox WHERE tbl = 'task' AND local_id = NEW.id AND key IS NULL);
    END;
CREATE TRIGGER mind_task_edit AFTER UPDATE ON tasks
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying)
    BEGIN
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'task', NEW.id, NULL, (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'task' AND r.local_id = NEW.id)
            WHERE NOT EXISTS (SELECT 1 FROM mind_outbox WHERE tbl = 'task' AND local_id = NEW.id AND key IS NULL);
    END;
CREATE TRIGGER mind_task_delete AFTER DELETE ON tasks
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying)
    BEGIN
        DELETE FROM mind_outbox WHERE key IN
            (SELECT key FROM mind_records WHERE tbl = 'task' AND local_id = OLD.id);
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'task', OLD.id, key, COALESCE(
                (SELECT seen FROM mind_outbox WHERE tbl = 'task' AND local_id = OLD.id AND key IS NULL),
                (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'task' AND r.local_id = OLD.id))
            FROM mind_records WHERE tbl = 'task' AND local_id = OLD.id;
        DELETE FROM mind_outbox WHERE tbl = 'task' AND local_id = OLD.id AND key IS NULL;
        UPDATE mind_records SET local_id = NULL WHERE tbl = 'task' AND local_id = OLD.id;
    END;

CREATE TRIGGER mind_llm_memory_write AFTER INSERT ON llm_memory
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying)
    BEGIN
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'llm_memory', NEW.id, NULL, (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'llm_memory' AND r.local_id = NEW.id)
            WHERE NOT EXISTS (SELECT 1 FROM mind_outbox WHERE tbl = 'llm_memory' AND local_id = NEW.id AND key IS NULL);
    END;
CREATE TRIGGER mind_llm_memory_edit AFTER UPDATE ON llm_memory
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying)
    BEGIN
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'llm_memory', NEW.id, NULL, (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'llm_memory' AND r.local_id = NEW.id)
            WHERE NOT EXISTS (SELECT 1 FROM mind_outbox WHERE tbl = 'llm_memory' AND local_id = NEW.id AND key IS NULL);
    END;
CREATE TRIGGER mind_llm_memory_delete AFTER DELETE ON llm_memory
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying)
    BEGIN
        DELETE FROM mind_outbox WHERE key IN
            (SELECT key FROM mind_records WHERE tbl = 'llm_memory' AND local_id = OLD.id);
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'llm_memory', OLD.id, key, COALESCE(
                (SELECT seen FROM mind_outbox WHERE tbl = 'llm_memory' AND local_id = OLD.id AND key IS NULL),
                (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'llm_memory' AND r.local_id = OLD.id))
            FROM mind_records WHERE tbl = 'llm_memory' AND local_id = OLD.id;
        DELETE FROM mind_outbox WHERE tbl = 'llm_memory' AND local_id = OLD.id AND key IS NULL;
        UPDATE mind_records SET local_id = NULL WHERE tbl = 'llm_memory' AND local_id = OLD.id;
    END;

-- What was written before this step is in the person's memory too: the
-- first device link publishes it.
INSERT INTO mind_outbox (tbl, local_id, key) SELECT 'diary', id, NULL FROM diary_entries;
INSERT INTO mind_outbox (tbl, local_id, key) SELECT 'concept', id, NULL FROM concepts;
INSERT INTO mind_outbox (tbl, local_id, key) SELECT 'link', id, NULL FROM links;
INSERT INTO mind_outbox (tbl, local_id, key) SELECT 'goal', id, NULL FROM goals;
INSERT INTO mind_outbox (tbl, local_id, key) SELECT 'task', id, NULL FROM tasks;
INSERT INTO mind_outbox (tbl, local_id, key) SELECT 'llm_memory', id, NULL FROM llm_memory;
