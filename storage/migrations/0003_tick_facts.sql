-- Porfiry schema version 3: what a cognitive-core tick measured, so
-- `agent_log` answers "why did tick N fail", "how big was its prompt" and
-- "how many model calls did it cost" without reading the trace.
ALTER TABLE agent_log ADD COLUMN error TEXT;                                -- the model call's failure, if any
ALTER TABLE agent_log ADD COLUMN prompt_tokens INTEGER NOT NULL DEFAULT 0;  -- estimated prompt size
ALTER TABLE agent_log ADD COLUMN model_calls INTEGER NOT NULL DEFAULT 0;    -- main + evaluations + validators
