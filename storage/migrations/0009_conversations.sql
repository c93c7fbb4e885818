-- Porfiry schema version 9: what a conversation needs to outlive the process.
--
-- 1. `turn_records`: for each turn the API answered, the tool turns between
--    the user's message and the answer (`TOOL_CALL` lines and their
--    `TOOL_RESULT`s), which a client never sees and so never sends back. A
--    restarted node rebuilding a client's history finds them here (seed 000:
--    the history is never cleaned). `key` is a SHA-256 of the client's scope
--    and the two texts; `seq` orders them for dropping the oldest; `bytes`
--    is the size the node budgets them by.
-- 2. `chat_messages`: the whole history of each chat session of the phone
--    bindings (user, assistant and tool turns in order), so a conversation
--    comes back after the app is paused or killed.

CREATE TABLE turn_records (
    key   BLOB    PRIMARY KEY CHECK (length(key) = 32),
    turns TEXT    NOT NULL CHECK (json_valid(turns)),     -- JSON [{"role": "assistant", "content": "TOOL_CALL: …"}, …]
    bytes INTEGER NOT NULL CHECK (bytes >= 0),
    seq   INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX turn_records_seq ON turn_records (seq);

CREATE TABLE chat_messages (
    id         INTEGER PRIMARY KEY,
    session    TEXT    NOT NULL CHECK (length(session) BETWEEN 1 AND 256),
    role       TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
    content    TEXT    NOT NULL,
    created_ms INTEGER NOT NULL
);
CREATE INDEX chat_messages_session ON chat_messages (session, id);
