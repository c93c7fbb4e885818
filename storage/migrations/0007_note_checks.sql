-- Porfiry schema version 7: the same `notes`, with its two CHECKs of three
-- or more values written as equalities. SQLite evaluates `x IN (a, b, c)`
-- in a CHECK by building a temporary b-tree of the list on every INSERT and
-- UPDATE (`EXPLAIN` shows an `OpenEphemeral` per list): two per note, about
-- 2 µs each, a fifth of what storing a note received in catch-up costs
-- (perf, `mesh_daemon` catch_up_10k). The allowed values are unchanged. The
-- table is rebuilt the way 0006 did (SQLite cannot change a CHECK in
-- place), inside the migration's one transaction.

CREATE TABLE notes_v7 (
    id             INTEGER PRIMARY KEY,
    text           TEXT    NOT NULL,
    topic          TEXT,
    mentions       TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(mentions)),  -- JSON array of peer ids / names
    hashtags       TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(hashtags)),  -- JSON array, parsed when written
    source         TEXT    NOT NULL DEFAULT 'user'
                   CHECK (source = 'user' OR source = 'llm' OR source = 'cli' OR source = 'system'),
    priority       INTEGER NOT NULL DEFAULT 0,
    read           INTEGER NOT NULL DEFAULT 0 CHECK (read IN (0, 1)),           -- read by the LLM
    hidden         INTEGER NOT NULL DEFAULT 0 CHECK (hidden IN (0, 1)),         -- hidden from the user
    tags           TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),      -- local tags, never replicated
    llm_id         TEXT,                                                        -- local, never replicated
    reply_to       BLOB,                                                        -- item id of the note answered
    audience       TEXT    NOT NULL DEFAULT 'private'
                   CHECK (audience = 'private' OR audience = 'public' OR audience = 'friends'
                          OR audience GLOB 'group:?*' OR audience GLOB 'peer:?*'
                          OR audience GLOB 'club:?*@?*'),
    item_id        BLOB    UNIQUE,                                              -- set when this local note was published
    origin_author  TEXT,                                                        -- peer id, for notes merged from friends
    origin_item_id BLOB    UNIQUE,                                              -- the item a merged note came from
    created        INTEGER NOT NULL,
    updated        INTEGER NOT NULL
);
INSERT INTO notes_v7 (id, text, topic, mentions, hashtags, source, priority, read, hidden, tags,
                      llm_id, reply_to, audience, item_id, origin_author, origin_item_id,
                      created, updated)
    SELECT id, text, topic, mentions, hashtags, source, priority, read, hidden, tags,
           llm_id, reply_to, audience, item_id, origin_author, origin_item_id,
           created, updated
    FROM notes;
DROP TABLE notes;
ALTER TABLE notes_v7 RENAME TO notes;
CREATE INDEX notes_created ON notes (created);
CREATE INDEX notes_unread ON notes (read, priority);
