-- Porfiry schema version 5: one-time invitations (`porfiry invite`). The
-- secret itself is never stored, only its SHA-256; a row is open while
-- `used_ms` is NULL and `expires_ms` is in the future. Self-contained: it
-- touches no other table, so it can be renumbered if another step lands first.
CREATE TABLE invitations (
    id          INTEGER PRIMARY KEY,
    secret_hash BLOB NOT NULL UNIQUE CHECK (length(secret_hash) = 32),
    name        TEXT NOT NULL DEFAULT '',        -- what the joiner will be called here
    groups      TEXT NOT NULL DEFAULT '[]',      -- JSON array of group names for the joiner
    created_ms  INTEGER NOT NULL,
    expires_ms  INTEGER NOT NULL,
    used_ms     INTEGER,                         -- set once, when redeemed
    used_by     TEXT                             -- the peer id that redeemed it
);
CREATE INDEX invitations_open ON invitations (expires_ms) WHERE used_ms IS NULL;
