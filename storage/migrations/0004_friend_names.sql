-- Porfiry schema version 4: friend names (issue 12). A name is what the user
-- calls a friend locally (`friends add --name anna`, `@anna` in a note); it
-- must pick one friend, so names are unique ignoring case. The Rust check in
-- `Store::add_friend` / `set_friend_name` folds Unicode case and names the
-- friend that has the name already; this index is the backstop for a write
-- that slips past it (two processes at once), folding ASCII case as SQLite's
-- lower() does. An empty name means "no name" and may repeat.
--
-- No code wrote names before this version, but a hand-edited file might hold
-- repeats: every later holder of a repeated name loses it (the first keeps
-- it), so the index can be built instead of the upgrade failing.
UPDATE agent_peers SET name = ''
 WHERE name <> ''
   AND EXISTS (SELECT 1 FROM agent_peers AS earlier
                WHERE lower(earlier.name) = lower(agent_peers.name)
                  AND earlier.id < agent_peers.id);
CREATE UNIQUE INDEX agent_peers_name ON agent_peers (lower(name)) WHERE name <> '';
