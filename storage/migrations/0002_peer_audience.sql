-- Porfiry schema version 2: direct messages. A note or item may now be for one
-- friend (`peer:<peer id>`, issue 9's messages_send). SQLite cannot change a
-- CHECK constraint in place, so `notes` and `items` are rebuilt the way the
-- SQLite manual prescribes (create the new table, copy every row, drop the old
-- one, rename, recreate the indexes), inside the migration's one transaction:
-- a crash leaves the file at version 1 with its rows. No foreign key, trigger
-- or view refers to either table, so nothing else needs touching. Only the
-- audience CHECKs differ from version 1.

CREATE TABLE notes_v2 (
    id             INTEGER PRIMARY KEY,
    text           TEXT    NOT NULL,
    topic          TEXT,
    mentions       TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(mentions)),  -- JSON array of peer ids / names
    hashtags       TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(hashtags)),  -- JSON array, parsed when written
    source         TEXT    NOT NULL DEFAULT 'user' CHECK (source IN ('user', 'llm', 'cli', 'system')),
    priority       INTEGER NOT NULL DEFAULT 0,
    read           INTEGER NOT NULL DEFAULT 0 CHECK (read IN (0, 1)),           -- read by the LLM
    hidden         INTEGER NOT NULL DEFAULT 0 CHECK (hidden IN (0, 1)),         -- hidden from the user
    tags           TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),      -- local tags, never replicated
    llm_id         TEXT,                                                        -- local, never replicated
    reply_to       BLOB,                                                        -- item id of the note answered
    audience       TEXT    NOT NULL DEFAULT 'private'
                   CHECK (audience IN ('private', 'public', 'friends')
                          OR audience GLOB 'group:?*' OR audience GLOB 'peer:?*'),
    item_id        BLOB    UNIQUE,                                              -- set when this local note was published
    origin_author  TEXT,                                                        -- peer id, for notes merged from friends
    origin_item_id BLOB    UNIQUE,                                              -- the item a merged note came from
    created        INTEGER NOT NULL,
    updated        INTEGER NOT NULL
);
INSERT INTO notes_v2 (id, text, topic, mentions, hashtags, source, priority, read, hidden, tags,
                      llm_id, reply_to, audience, item_id, origin_author, origin_item_id,
                      created, updated)
    SELECT id, text, topic, mentions, hashtags, source, priority, read, hidden, tags,
           llm_id, reply_to, audience, item_id, origin_author, origin_item_id,
           created, updated
    FROM notes;
DROP TABLE notes;
ALTER TABLE notes_v2 RENAME TO notes;
CREATE INDEX notes_created ON notes (created);
CREATE INDEX notes_unread ON notes (read, priority);

CREATE TABLE items_v2 (
    id            BLOB    PRIMARY KEY CHECK (length(id) = 32),    -- SHA-256 of the envelope
    author        TEXT    NOT NULL,                                -- peer id
    kind          TEXT    NOT NULL,                                -- note, rating, retraction, ...
    audience      TEXT    NOT NULL CHECK (audience IN ('public', 'friends')
                                          OR audience GLOB 'group:?*' OR audience GLOB 'peer:?*'),
    created       INTEGER NOT NULL,                                -- author's clock, Unix ms
    expires       INTEGER,
    payload       BLOB    NOT NULL,
    signature     BLOB    NOT NULL,
    received_from TEXT,                                            -- NULL for our own items
    max_hops      INTEGER NOT NULL CHECK (max_hops BETWEEN 0 AND 255),  -- the author's limit
    hops_left     INTEGER NOT NULL CHECK (hops_left BETWEEN 0 AND max_hops),
    retracts      BLOB    CHECK (length(retracts) = 32),          -- a retraction's target
    replaces      BLOB    CHECK (length(replaces) = 32)           -- the earlier item this one supersedes
);
INSERT INTO items_v2 (id, author, kind, audience, created, expires, payload, signature,
                      received_from, max_hops, hops_left, retracts, replaces)
    SELECT id, author, kind, audience, created, expires, payload, signature,
           received_from, max_hops, hops_left, retracts, replaces
    FROM items;
DROP TABLE items;
ALTER TABLE items_v2 RENAME TO items;
CREATE INDEX items_created ON items (created, id);
