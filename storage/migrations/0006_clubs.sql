-- Porfiry schema version 6: clubs (issue 13). Items and notes may now be
-- for a club (`club:NAME@FOUNDER`), and a club change's item carries the
-- member it concerns and whether it ends a membership (routing facts the
-- engine needs without decoding the envelope). `notes` and `items` are
-- rebuilt the way 0002 did (SQLite cannot change a CHECK in place), inside
-- the migration's one transaction: a crash leaves the file at version 5.
--
-- `club_changes` keeps every club change ever accepted, decoded, so the
-- club book is rebuilt at start-up without decoding envelopes, and survives
-- the deletion of its item (membership is history). `clubs` lists the
-- clubs founded here (a new club has no change yet).

CREATE TABLE notes_v6 (
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
                          OR audience GLOB 'group:?*' OR audience GLOB 'peer:?*'
                          OR audience GLOB 'club:?*@?*'),
    item_id        BLOB    UNIQUE,                                              -- set when this local note was published
    origin_author  TEXT,                                                        -- peer id, for notes merged from friends
    origin_item_id BLOB    UNIQUE,                                              -- the item a merged note came from
    created        INTEGER NOT NULL,
    updated        INTEGER NOT NULL
);
INSERT INTO notes_v6 (id, text, topic, mentions, hashtags, source, priority, read, hidden, tags,
                      llm_id, reply_to, audience, item_id, origin_author, origin_item_id,
                      created, updated)
    SELECT id, text, topic, mentions, hashtags, source, priority, read, hidden, tags,
           llm_id, reply_to, audience, item_id, origin_author, origin_item_id,
           created, updated
    FROM notes;
DROP TABLE notes;
ALTER TABLE notes_v6 RENAME TO notes;
CREATE INDEX notes_created ON notes (created);
CREATE INDEX notes_unread ON notes (read, priority);

CREATE TABLE items_v6 (
    id            BLOB    PRIMARY KEY CHECK (length(id) = 32),    -- SHA-256 of the envelope
    author        TEXT    NOT NULL,                                -- peer id
    kind          TEXT    NOT NULL,                                -- note, rating, retraction, ...
    audience      TEXT    NOT NULL CHECK (audience IN ('public', 'friends')
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
INSERT INTO items_v6 (id, author, kind, audience, created, expires, payload, signature,
                      received_from, max_hops, hops_left, retracts, replaces)
    SELECT id, author, kind, audience, created, expires, payload, signature,
           received_from, max_hops, hops_left, retracts, replaces
    FROM items;
DROP TABLE items;
ALTER TABLE items_v6 RENAME TO items;
CREATE INDEX items_created ON items (created, id);

CREATE TABLE club_changes (
    item_id  BLOB    PRIMARY KEY CHECK (length(item_id) = 32),  -- the club_change item
    club     TEXT    NOT NULL CHECK (club GLOB '?*@?*'),          -- NAME@FOUNDER
    action   TEXT    NOT NULL CHECK (action IN ('add', 'add_admin', 'remove', 'leave')),
    target   TEXT    NOT NULL,                                    -- peer id
    author   TEXT    NOT NULL,                                    -- peer id
    created  INTEGER NOT NULL                                     -- the item's created_ms
) WITHOUT ROWID;
CREATE INDEX club_changes_club ON club_changes (club, created);

CREATE TABLE clubs (
    club     TEXT    PRIMARY KEY CHECK (club GLOB '?*@?*'),       -- NAME@FOUNDER
    created  INTEGER NOT NULL                                     -- when founded here, Unix ms
) WITHOUT ROWID;
