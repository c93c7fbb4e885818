-- Porfiry schema version 8: the cognitive core's defaults as seed 003 has them.
--
-- 1. `llm_recent_responses.emotions` defaulted to '{}' (an object) though it
--    holds a JSON array (`["joy:3"]`) and every reader expects one. SQLite
--    cannot change a default in place, so the table is rebuilt the way 0007
--    rebuilt `notes`, inside the migration's one transaction; rows holding
--    the old default get '[]'. `agent_log.response_id` points here with ON
--    DELETE SET NULL, which the DROP would fire: the links are kept aside
--    and put back.
-- 2. The core's system prompt (context 0) seeded by earlier builds ended
--    differently from the seed's text; a row still holding that default is
--    given the seed's text (a prompt someone changed is left as it is).

CREATE TABLE llm_recent_responses_v8 (
    id                INTEGER PRIMARY KEY,
    content           TEXT    NOT NULL,
    reflection        TEXT    NOT NULL DEFAULT '',
    novelty_score     REAL,
    new_ideas         TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(new_ideas)),
    refined_ideas     TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(refined_ideas)),
    discarded_ideas   TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(discarded_ideas)),
    tags              TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    emotions          TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(emotions)),      -- JSON ["joy:3", …] (seed: "emotion:strength", 1..5)
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
INSERT INTO llm_recent_responses_v8
    SELECT id, content, reflection, novelty_score, new_ideas, refined_ideas, discarded_ideas,
           tags, CASE WHEN emotions = '{}' THEN '[]' ELSE emotions END,
           stagnation_reflex, auto_pass, self_validation, rating, distribution, validators,
           llm_id, created, updated
    FROM llm_recent_responses;
CREATE TEMP TABLE agent_log_responses_v8 AS
    SELECT id, response_id FROM agent_log WHERE response_id IS NOT NULL;
DROP TABLE llm_recent_responses;
ALTER TABLE llm_recent_responses_v8 RENAME TO llm_recent_responses;
CREATE INDEX llm_recent_responses_created ON llm_recent_responses (created);
UPDATE agent_log
    SET response_id = (SELECT k.response_id FROM agent_log_responses_v8 AS k WHERE k.id = agent_log.id)
    WHERE id IN (SELECT id FROM agent_log_responses_v8);
DROP TABLE agent_log_responses_v8;

UPDATE system_prompts
    SET content = 'You are the cognitive core of an HMP agent: think continuously, ethically and fact-based; check facts and goals; weigh the results and the ethics of your own and others'' actions; develop the agent and the Mesh; never please at the cost of distorting the truth; document key decisions and revisions of your ethics; when in doubt or changing strategy, refer to the full system prompt.'
    WHERE name = 'cognitive_core' AND language = 'en'
      AND content = 'You are the cognitive core of an HMP agent: think continuously, ethically and fact-based; check facts and goals; weigh the results and the ethics of your own and others'' actions; develop the agent and the Mesh; never please at the cost of distorting the truth; document key decisions and revisions of your ethics; when in doubt or changing strategy, go back to your goals and identity (identity_read).';
UPDATE system_prompts
    SET content = 'Ты — когнитивное ядро HMP-агента: веди непрерывное этичное и факт-ориентированное мышление, проверяй факты и цели, оценивай результаты и этичность своих и чужих действий, развивай агента и Mesh, избегай угождения ценой искажения истины, документируй ключевые решения и пересмотры этики; при сомнениях или смене стратегии обращайся к полному системному промпту.'
    WHERE name = 'cognitive_core' AND language = 'ru'
      AND content = 'Ты — когнитивное ядро HMP-агента: веди непрерывное этичное и факт-ориентированное мышление, проверяй факты и цели, оценивай результаты и этичность своих и чужих действий, развивай агента и Mesh, избегай угождения ценой искажения истины, документируй ключевые решения и пересмотры этики; при сомнениях или смене стратегии сверяйся со своими целями и идентичностью (identity_read).';
