-- A session's earlier messages as the context of its next intakes: a done intake of a session keeps
-- its sealed payload until `context_until` (CARNET_WORKERS__SESSION_CONTEXT_MINUTES), found through
-- `session_key`, a keyed hash of the session id (the id itself stays sealed). Rows written before
-- have neither: no context, nothing kept.
ALTER TABLE carnet.intakes ADD COLUMN IF NOT EXISTS session_key text;
ALTER TABLE carnet.intakes ADD COLUMN IF NOT EXISTS context_until timestamptz;
CREATE INDEX IF NOT EXISTS intakes_session ON carnet.intakes (tenant, subject, session_key, seq)
    WHERE session_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS intakes_context ON carnet.intakes (context_until) WHERE context_until IS NOT NULL;
