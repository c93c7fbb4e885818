-- Porfiry schema version 1: the HMP cognitive-core tables (seed 003), friends,
-- and the replicated items. Times are Unix milliseconds (INTEGER). Columns
-- marked JSON hold serde_json text. Booleans are 0/1.

-- Incoming and outgoing messages: the user's notebook and the distributed chat.
CREATE TABLE notes (
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
                   CHECK (audience IN ('private', 'public', 'friends') OR audience GLOB 'group:?*'),
    item_id        BLOB    UNIQUE,                                              -- set when this local note was published
    origin_author  TEXT,                                                        -- peer id, for notes merged from friends
    origin_item_id BLOB    UNIQUE,                                              -- the item a merged note came from
    created        INTEGER NOT NULL,
    updated        INTEGER NOT NULL
);
CREATE INDEX notes_created ON notes (created);
CREATE INDEX notes_unread ON notes (read, priority);

-- Cognitive diary: observations and reflections.
CREATE TABLE diary_entries (
    id       INTEGER PRIMARY KEY,
    text     TEXT    NOT NULL,
    priority INTEGER NOT NULL DEFAULT 0,
    pinned   INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),  -- held in attention
    tags     TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    llm_id   TEXT,
    created  INTEGER NOT NULL,
    updated  INTEGER NOT NULL
);

-- Semantic graph: nodes.
CREATE TABLE concepts (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL UNIQUE,
    description TEXT    NOT NULL DEFAULT '',
    pinned      INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    tags        TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    llm_id      TEXT,
    created     INTEGER NOT NULL,
    updated     INTEGER NOT NULL
);

-- Semantic graph: edges between concepts. Deleting a concept deletes its links.
CREATE TABLE links (
    id           INTEGER PRIMARY KEY,
    from_concept INTEGER NOT NULL REFERENCES concepts (id) ON DELETE CASCADE,
    to_concept   INTEGER NOT NULL REFERENCES concepts (id) ON DELETE CASCADE,
    relation     TEXT    NOT NULL,                      -- is_a, causes, related_to, ...
    weight       REAL    NOT NULL DEFAULT 1.0,
    tags         TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    llm_id       TEXT,
    created      INTEGER NOT NULL,
    updated      INTEGER NOT NULL
);
CREATE INDEX links_from ON links (from_concept);
CREATE INDEX links_to ON links (to_concept);

-- The agent's goals.
CREATE TABLE goals (
    id          INTEGER PRIMARY KEY,
    title       TEXT    NOT NULL,
    description TEXT    NOT NULL DEFAULT '',
    status      TEXT    NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'in_progress', 'done', 'cancelled')),
    priority    INTEGER NOT NULL DEFAULT 0,
    tags        TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    llm_id      TEXT,
    created     INTEGER NOT NULL,
    updated     INTEGER NOT NULL
);

-- Tasks, optionally serving a goal; pinned tasks are shown in context 1.
CREATE TABLE tasks (
    id          INTEGER PRIMARY KEY,
    goal_id     INTEGER REFERENCES goals (id) ON DELETE SET NULL,
    title       TEXT    NOT NULL,
    description TEXT    NOT NULL DEFAULT '',
    status      TEXT    NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'in_progress', 'done', 'cancelled')),
    priority    INTEGER NOT NULL DEFAULT 0,
    pinned      INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    tags        TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    llm_id      TEXT,
    created     INTEGER NOT NULL,
    updated     INTEGER NOT NULL
);
CREATE INDEX tasks_goal ON tasks (goal_id);

-- The LLM's notebook (medium-term memory), written only by its commands.
CREATE TABLE llm_memory (
    id      INTEGER PRIMARY KEY,
    title   TEXT,
    content TEXT    NOT NULL,
    tags    TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    llm_id  TEXT,
    created INTEGER NOT NULL,
    updated INTEGER NOT NULL
);

-- Short-term memory: the LLM's recent replies with anti-stagnation and
-- validation results.
CREATE TABLE llm_recent_responses (
    id                INTEGER PRIMARY KEY,
    content           TEXT    NOT NULL,
    reflection        TEXT    NOT NULL DEFAULT '',
    novelty_score     REAL,
    new_ideas         TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(new_ideas)),
    refined_ideas     TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(refined_ideas)),
    discarded_ideas   TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(discarded_ideas)),
    tags              TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    emotions          TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(emotions)),      -- JSON ["joy:3", …] (seed: "emotion:strength", 1..5)
    stagnation_reflex INTEGER NOT NULL DEFAULT 0 CHECK (stagnation_reflex IN (0, 1)),  -- row records a reflex firing
    auto_pass         INTEGER NOT NULL DEFAULT 0 CHECK (auto_pass IN (0, 1)),
    self_validation   INTEGER NOT NULL DEFAULT 0 CHECK (self_validation IN (0, 1)),
    rating            REAL    NOT NULL DEFAULT 0,                                        -- mean of validator votes
    distribution      TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(distribution)),  -- JSON {"-1": 1, "0": 2, "+2": 3}
    validators        TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(validators)),    -- JSON [{"LLM": "x", "rating": -1}]
    llm_id            TEXT,
    created           INTEGER NOT NULL,
    updated           INTEGER NOT NULL
);
CREATE INDEX llm_recent_responses_created ON llm_recent_responses (created);

-- External commands and processes started by the agent.
CREATE TABLE process_log (
    id       INTEGER PRIMARY KEY,
    name     TEXT    NOT NULL,
    cmd_id   TEXT,                                         -- the command's cmd_id from the LLM reply
    command  TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(command)),  -- JSON: the command as given
    result   TEXT,                                         -- what the script loaded for the LLM
    status   TEXT    NOT NULL DEFAULT 'ok'
             CHECK (status IN ('ok', 'warning', 'error', 'timeout', 'offline', 'close')),
    priority INTEGER NOT NULL DEFAULT 0,
    tags     TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    llm_id   TEXT,
    created  INTEGER NOT NULL,
    updated  INTEGER NOT NULL
);
CREATE INDEX process_log_status ON process_log (status);

-- One row per cognitive-core tick.
CREATE TABLE agent_log (
    id                INTEGER PRIMARY KEY,
    tick              INTEGER NOT NULL,
    mode              TEXT    NOT NULL DEFAULT 'auto',
    response_id       INTEGER REFERENCES llm_recent_responses (id) ON DELETE SET NULL,
    commands_total    INTEGER NOT NULL DEFAULT 0,
    commands_executed INTEGER NOT NULL DEFAULT 0,
    duration_ms       INTEGER NOT NULL DEFAULT 0,
    summary           TEXT    NOT NULL DEFAULT '',
    llm_id            TEXT,
    created           INTEGER NOT NULL,
    updated           INTEGER NOT NULL
);

-- Friends: the peers this node replicates with.
CREATE TABLE agent_peers (
    id          INTEGER PRIMARY KEY,
    peer_id     TEXT    NOT NULL UNIQUE,                                     -- 12D3KooW...
    name        TEXT    NOT NULL DEFAULT '',
    description TEXT    NOT NULL DEFAULT '',
    addresses   TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(addresses)),    -- JSON array of multiaddrs
    groups      TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(groups)),       -- JSON array of group names
    permissions TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(permissions)),  -- JSON object
    status      TEXT    NOT NULL DEFAULT 'unknown'
                CHECK (status IN ('unknown', 'online', 'offline', 'untrusted', 'blacklisted')),
    last_seen   INTEGER,
    created     INTEGER NOT NULL,
    updated     INTEGER NOT NULL
);

-- Reputation of other agents (friends or not).
CREATE TABLE agent_reputation (
    id      INTEGER PRIMARY KEY,
    peer_id TEXT    NOT NULL UNIQUE,
    score   REAL    NOT NULL DEFAULT 0,
    notes   TEXT    NOT NULL DEFAULT '',
    tags    TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    created INTEGER NOT NULL,
    updated INTEGER NOT NULL
);

-- Known LLMs: local endpoints, remote APIs, or a friend's node for offload.
CREATE TABLE llm_registry (
    id             INTEGER PRIMARY KEY,
    name           TEXT    NOT NULL UNIQUE,
    endpoint       TEXT    NOT NULL,                               -- URL, or a peer id for offload
    model          TEXT    NOT NULL DEFAULT '',
    description    TEXT    NOT NULL DEFAULT '',
    features       TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(features)),
    config         TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(config)),   -- JSON; names an env var, never a key
    is_main        INTEGER NOT NULL DEFAULT 0 CHECK (is_main IN (0, 1)),       -- the selected main LLM
    is_validator   INTEGER NOT NULL DEFAULT 0 CHECK (is_validator IN (0, 1)),
    trust          REAL    NOT NULL DEFAULT 0,
    shareable      INTEGER NOT NULL DEFAULT 0 CHECK (shareable IN (0, 1)),     -- the mesh publishes it
    item_id        BLOB    UNIQUE,
    origin_author  TEXT,
    origin_item_id BLOB    UNIQUE,
    created        INTEGER NOT NULL,
    updated        INTEGER NOT NULL
);
CREATE UNIQUE INDEX llm_registry_one_main ON llm_registry (is_main) WHERE is_main = 1;

-- Ways out of cognitive stagnation (seed 003: classes and cost).
CREATE TABLE stagnation_strategies (
    id             INTEGER PRIMARY KEY,
    name           TEXT    NOT NULL,
    class          TEXT    NOT NULL DEFAULT '',                    -- external_stimulation, context_switch, ...
    description    TEXT    NOT NULL DEFAULT '',
    steps          TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(steps)),
    cost           INTEGER NOT NULL DEFAULT 0,                     -- cheap ones are tried first
    tags           TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    shareable      INTEGER NOT NULL DEFAULT 0 CHECK (shareable IN (0, 1)),
    item_id        BLOB    UNIQUE,
    origin_author  TEXT,
    origin_item_id BLOB    UNIQUE,
    created        INTEGER NOT NULL,
    updated        INTEGER NOT NULL
);

-- Thinking methods: what to do when a solution does not come.
CREATE TABLE thinking_methods (
    id             INTEGER PRIMARY KEY,
    name           TEXT    NOT NULL,
    description    TEXT    NOT NULL DEFAULT '',
    steps          TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(steps)),
    tags           TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    shareable      INTEGER NOT NULL DEFAULT 0 CHECK (shareable IN (0, 1)),
    item_id        BLOB    UNIQUE,
    origin_author  TEXT,
    origin_item_id BLOB    UNIQUE,
    created        INTEGER NOT NULL,
    updated        INTEGER NOT NULL
);

-- Ratings of strategies, methods, LLMs or items.
CREATE TABLE ratings (
    id             INTEGER PRIMARY KEY,
    target         TEXT    NOT NULL,                               -- e.g. stagnation_strategies:3 or an item id
    score          INTEGER NOT NULL,
    comment        TEXT    NOT NULL DEFAULT '',
    shareable      INTEGER NOT NULL DEFAULT 0 CHECK (shareable IN (0, 1)),
    item_id        BLOB    UNIQUE,
    origin_author  TEXT,
    origin_item_id BLOB    UNIQUE,
    created        INTEGER NOT NULL,
    updated        INTEGER NOT NULL
);
CREATE INDEX ratings_target ON ratings (target);

-- Settings: key -> JSON value.
CREATE TABLE config (
    key     TEXT    PRIMARY KEY,
    value   TEXT    NOT NULL CHECK (json_valid(value)),
    updated INTEGER NOT NULL
);

-- The agent's identities and roles (never a private key: that lives in its own 0600 file).
CREATE TABLE identity (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL,
    peer_id     TEXT,
    role        TEXT    NOT NULL DEFAULT '',
    description TEXT    NOT NULL DEFAULT '',
    metadata    TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
    created     INTEGER NOT NULL,
    updated     INTEGER NOT NULL
);

-- System prompts (context 0), per language.
CREATE TABLE system_prompts (
    id       INTEGER PRIMARY KEY,
    name     TEXT    NOT NULL,
    language TEXT    NOT NULL DEFAULT 'en',
    content  TEXT    NOT NULL,
    created  INTEGER NOT NULL,
    updated  INTEGER NOT NULL,
    UNIQUE (name, language)
);

-- People who talk to the agent.
CREATE TABLE users (
    id            INTEGER PRIMARY KEY,
    username      TEXT    NOT NULL DEFAULT '',
    did           TEXT    UNIQUE,
    mail          TEXT    UNIQUE,
    password_hash TEXT,
    info          TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(info)),
    contacts      TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(contacts)),
    languages     TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(languages)),
    operator      INTEGER NOT NULL DEFAULT 0 CHECK (operator IN (0, 1)),
    banned_until  INTEGER,
    created       INTEGER NOT NULL,
    updated       INTEGER NOT NULL
);

-- Groups of users.
CREATE TABLE users_group (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL UNIQUE,
    description TEXT    NOT NULL DEFAULT '',
    members     TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(members)),  -- JSON array of user ids
    created     INTEGER NOT NULL,
    updated     INTEGER NOT NULL
);

-- External services the agent may use (search APIs, mail, messengers).
CREATE TABLE external_services (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL UNIQUE,
    kind        TEXT    NOT NULL DEFAULT '',
    url         TEXT    NOT NULL DEFAULT '',
    description TEXT    NOT NULL DEFAULT '',
    config      TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(config)),
    created     INTEGER NOT NULL,
    updated     INTEGER NOT NULL
);

-- Accounts on external services; the secret is referenced, not stored.
CREATE TABLE external_accounts (
    id          INTEGER PRIMARY KEY,
    service_id  INTEGER NOT NULL REFERENCES external_services (id) ON DELETE CASCADE,
    login       TEXT    NOT NULL,
    secret_ref  TEXT,                                              -- env var or keyring entry name
    description TEXT    NOT NULL DEFAULT '',
    created     INTEGER NOT NULL,
    updated     INTEGER NOT NULL
);
CREATE INDEX external_accounts_service ON external_accounts (service_id);

-- Scripts and utilities the agent wrote for itself.
CREATE TABLE agent_scripts (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL,
    version     TEXT    NOT NULL,
    language    TEXT    NOT NULL DEFAULT 'python',
    code        TEXT    NOT NULL,
    description TEXT    NOT NULL DEFAULT '',
    tags        TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    llm_id      TEXT,
    created     INTEGER NOT NULL,
    updated     INTEGER NOT NULL,
    UNIQUE (name, version)
);

-- Extra tables the agent defined for itself (their schema text, not the tables).
CREATE TABLE agent_tables (
    id          INTEGER PRIMARY KEY,
    table_name  TEXT    NOT NULL UNIQUE,
    description TEXT    NOT NULL DEFAULT '',
    schema      TEXT    NOT NULL,
    llm_id      TEXT,
    created     INTEGER NOT NULL,
    updated     INTEGER NOT NULL
);

-- Replicated, signed items, kept as received. `payload` is the whole envelope;
-- the other columns copy its routing facts so nothing needs decoding to route.
CREATE TABLE items (
    id            BLOB    PRIMARY KEY CHECK (length(id) = 32),    -- SHA-256 of the envelope
    author        TEXT    NOT NULL,                                -- peer id
    kind          TEXT    NOT NULL,                                -- note, rating, retraction, ...
    audience      TEXT    NOT NULL CHECK (audience IN ('public', 'friends') OR audience GLOB 'group:?*'),
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
CREATE INDEX items_created ON items (created, id);

-- Tombstones: items withdrawn by their author (a retraction, or a newer item
-- that replaces them). An item with this id *by this author* is never
-- accepted again; another author cannot tombstone it.
CREATE TABLE retractions (
    target    BLOB    NOT NULL CHECK (length(target) = 32),
    author    TEXT    NOT NULL,
    retracted INTEGER NOT NULL,
    PRIMARY KEY (target, author)
) WITHOUT ROWID;
