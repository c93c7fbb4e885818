-- Porfiry schema version 12: a person's devices share their own know-how
-- and their model registry too (issue 45 §2): `stagnation_strategies`,
-- `thinking_methods`, `ratings` and `llm_registry` rows are memory records
-- like the diary's, published by the same triggers into `mind_outbox`.
--
-- Only the person's own rows travel (`origin_author` NULL): a row merged
-- from a friend's item reaches each device from the friend. Only the
-- columns that travel (`storage/src/mind/columns.rs`) make an edit: a row
-- marked published (`item_id`), made shareable, or selected as this
-- device's main model (`is_main`) stays as it is on the other devices, so
-- the edit triggers name their columns (`UPDATE OF`). The registry's
-- secret (`config.api_key_env`) is taken out of every published version
-- where a row is read (`storage/src/mind/config.rs`), not here.
--
-- `mind_records.tbl` takes the four new names: the table is rebuilt (a
-- CHECK cannot be altered in place). The triggers of version 10 name
-- `mind_records` in their bodies; renaming the new table into its place
-- with `legacy_alter_table` on leaves them as they are (without it,
-- SQLite re-parses every trigger at the rename and refuses one that names
-- the table dropped a statement earlier).

CREATE TABLE mind_records_v12 (
    key      BLOB    PRIMARY KEY CHECK (length(key) = 16),
    tbl      TEXT    NOT NULL CHECK (tbl IN ('diary', 'concept', 'link', 'goal', 'task', 'llm_memory',
                                             'strategy', 'method', 'rating', 'llm')),
    local_id INTEGER,                                             -- the row here; NULL while deleted
    winner   BLOB    CHECK (winner IS NULL OR length(winner) = 32),  -- the winning version's item id
    origin   TEXT    NOT NULL,                                    -- the device that created it
    waiting  INTEGER NOT NULL DEFAULT 0 CHECK (waiting IN (0, 1))  -- the winner refers to a record not here yet
) WITHOUT ROWID;
INSERT INTO mind_records_v12 (key, tbl, local_id, winner, origin, waiting)
    SELECT key, tbl, local_id, winner, origin, waiting FROM mind_records;
DROP TABLE mind_records;
PRAGMA legacy_alter_table = ON;
ALTER TABLE mind_records_v12 RENAME TO mind_records;
PRAGMA legacy_alter_table = OFF;
CREATE INDEX mind_records_local ON mind_records (tbl, local_id);
CREATE INDEX mind_records_waiting ON mind_records (key) WHERE waiting = 1;

CREATE TRIGGER mind_strategy_write AFTER INSERT ON stagnation_strategies
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying) AND NEW.origin_author IS NULL
    BEGIN
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'strategy', NEW.id, NULL, (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'strategy' AND r.local_id = NEW.id)
            WHERE NOT EXISTS (SELECT 1 FROM mind_outbox WHERE tbl = 'strategy' AND local_id = NEW.id AND key IS NULL);
    END;
CREATE TRIGGER mind_strategy_edit AFTER UPDATE OF name, class, description, steps, cost, tags, created ON stagnation_strategies
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying) AND NEW.origin_author IS NULL
    BEGIN
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'strategy', NEW.id, NULL, (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'strategy' AND r.local_id = NEW.id)
            WHERE NOT EXISTS (SELECT 1 FROM mind_outbox WHERE tbl = 'strategy' AND local_id = NEW.id AND key IS NULL);
    END;
CREATE TRIGGER mind_strategy_delete AFTER DELETE ON stagnation_strategies
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying)
    BEGIN
        DELETE FROM mind_outbox WHERE key IN
            (SELECT key FROM mind_records WHERE tbl = 'strategy' AND local_id = OLD.id);
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'strategy', OLD.id, key, COALESCE(
                (SELECT seen FROM mind_outbox WHERE tbl = 'strategy' AND local_id = OLD.id AND key IS NULL),
                (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'strategy' AND r.local_id = OLD.id))
            FROM mind_records WHERE tbl = 'strategy' AND local_id = OLD.id;
        DELETE FROM mind_outbox WHERE tbl = 'strategy' AND local_id = OLD.id AND key IS NULL;
        UPDATE mind_records SET local_id = NULL WHERE tbl = 'strategy' AND local_id = OLD.id;
    END;

CREATE TRIGGER mind_method_write AFTER INSERT ON thinking_methods
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying) AND NEW.origin_author IS NULL
    BEGIN
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'method', NEW.id, NULL, (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'method' AND r.local_id = NEW.id)
            WHERE NOT EXISTS (SELECT 1 FROM mind_outbox WHERE tbl = 'method' AND local_id = NEW.id AND key IS NULL);
    END;
CREATE TRIGGER mind_method_edit AFTER UPDATE OF name, description, steps, tags, created ON thinking_methods
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying) AND NEW.origin_author IS NULL
    BEGIN
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'method', NEW.id, NULL, (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'method' AND r.local_id = NEW.id)
            WHERE NOT EXISTS (SELECT 1 FROM mind_outbox WHERE tbl = 'method' AND local_id = NEW.id AND key IS NULL);
    END;
CREATE TRIGGER mind_method_delete AFTER DELETE ON thinking_methods
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying)
    BEGIN
        DELETE FROM mind_outbox WHERE key IN
            (SELECT key FROM mind_records WHERE tbl = 'method' AND local_id = OLD.id);
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'method', OLD.id, key, COALESCE(
                (SELECT seen FROM mind_outbox WHERE tbl = 'method' AND local_id = OLD.id AND key IS NULL),
                (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'method' AND r.local_id = OLD.id))
            FROM mind_records WHERE tbl = 'method' AND local_id = OLD.id;
        DELETE FROM mind_outbox WHERE tbl = 'method' AND local_id = OLD.id AND key IS NULL;
        UPDATE mind_records SET local_id = NULL WHERE tbl = 'method' AND local_id = OLD.id;
    END;

CREATE TRIGGER mind_rating_write AFTER INSERT ON ratings
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying) AND NEW.origin_author IS NULL
    BEGIN
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'rating', NEW.id, NULL, (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'rating' AND r.local_id = NEW.id)
            WHERE NOT EXISTS (SELECT 1 FROM mind_outbox WHERE tbl = 'rating' AND local_id = NEW.id AND key IS NULL);
    END;
CREATE TRIGGER mind_rating_edit AFTER UPDATE OF target, score, comment, created ON ratings
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying) AND NEW.origin_author IS NULL
    BEGIN
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'rating', NEW.id, NULL, (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'rating' AND r.local_id = NEW.id)
            WHERE NOT EXISTS (SELECT 1 FROM mind_outbox WHERE tbl = 'rating' AND local_id = NEW.id AND key IS NULL);
    END;
CREATE TRIGGER mind_rating_delete AFTER DELETE ON ratings
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying)
    BEGIN
        DELETE FROM mind_outbox WHERE key IN
            (SELECT key FROM mind_records WHERE tbl = 'rating' AND local_id = OLD.id);
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'rating', OLD.id, key, COALESCE(
                (SELECT seen FROM mind_outbox WHERE tbl = 'rating' AND local_id = OLD.id AND key IS NULL),
                (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'rating' AND r.local_id = OLD.id))
            FROM mind_records WHERE tbl = 'rating' AND local_id = OLD.id;
        DELETE FROM mind_outbox WHERE tbl = 'rating' AND local_id = OLD.id AND key IS NULL;
        UPDATE mind_records SET local_id = NULL WHERE tbl = 'rating' AND local_id = OLD.id;
    END;

CREATE TRIGGER mind_llm_write AFTER INSERT ON llm_registry
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying) AND NEW.origin_author IS NULL
    BEGIN
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'llm', NEW.id, NULL, (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'llm' AND r.local_id = NEW.id)
            WHERE NOT EXISTS (SELECT 1 FROM mind_outbox WHERE tbl = 'llm' AND local_id = NEW.id AND key IS NULL);
    END;
CREATE TRIGGER mind_llm_edit AFTER UPDATE OF name, endpoint, model, description, features, config, is_validator, trust, created ON llm_registry
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying) AND NEW.origin_author IS NULL
    BEGIN
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'llm', NEW.id, NULL, (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'llm' AND r.local_id = NEW.id)
            WHERE NOT EXISTS (SELECT 1 FROM mind_outbox WHERE tbl = 'llm' AND local_id = NEW.id AND key IS NULL);
    END;
CREATE TRIGGER mind_llm_delete AFTER DELETE ON llm_registry
    WHEN NOT EXISTS (SELECT 1 FROM mind_applying)
    BEGIN
        DELETE FROM mind_outbox WHERE key IN
            (SELECT key FROM mind_records WHERE tbl = 'llm' AND local_id = OLD.id);
        INSERT INTO mind_outbox (tbl, local_id, key, seen)
            SELECT 'llm', OLD.id, key, COALESCE(
                (SELECT seen FROM mind_outbox WHERE tbl = 'llm' AND local_id = OLD.id AND key IS NULL),
                (SELECT COALESCE(MAX(v.seq), 0) FROM mind_records r JOIN mind_versions v ON v.key = r.key WHERE r.tbl = 'llm' AND r.local_id = OLD.id))
            FROM mind_records WHERE tbl = 'llm' AND local_id = OLD.id;
        DELETE FROM mind_outbox WHERE tbl = 'llm' AND local_id = OLD.id AND key IS NULL;
        UPDATE mind_records SET local_id = NULL WHERE tbl = 'llm' AND local_id = OLD.id;
    END;

-- What the person wrote before this step is in their memory too: published
-- at once to a device already linked, or at the first link.
INSERT INTO mind_outbox (tbl, local_id, key) SELECT 'strategy', id, NULL FROM stagnation_strategies WHERE origin_author IS NULL;
INSERT INTO mind_outbox (tbl, local_id, key) SELECT 'method', id, NULL FROM thinking_methods WHERE origin_author IS NULL;
INSERT INTO mind_outbox (tbl, local_id, key) SELECT 'rating', id, NULL FROM ratings WHERE origin_author IS NULL;
INSERT INTO mind_outbox (tbl, local_id, key) SELECT 'llm', id, NULL FROM llm_registry WHERE origin_author IS NULL;
