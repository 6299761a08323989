-- An intake sent with an Idempotency-Key keeps a keyed fingerprint of its body, so the same key with
-- another body is refused (422 idempotency_key_reused) instead of answering the first intake.
-- From this version on, `idempotency_key` holds a keyed hash of the namespaced key and `session_id`
-- the session id sealed under the subject's data key (`enc1:` + base64); rows written before keep
-- their clear values, which still read back.
ALTER TABLE carnet.intakes ADD COLUMN IF NOT EXISTS request_fingerprint text;
