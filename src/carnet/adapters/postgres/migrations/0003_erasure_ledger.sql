-- The erasure ledger (adapters/postgres/erasure_ledger.py), shared by every process of every node:
-- each erasure, as one canonical JSON line of keyed hashes (adapters/erasure_line.py; never a
-- subject id), appended before anything is deleted.
--
-- Its own schema, `carnet_erasures`: a restore of the catalog's dump (`pg_dump --schema=carnet`)
-- must never rewind it, since it is what a restore reads to erase again what the backup brought back.
-- Append-only in the database too, as the audit trail is. `doc` is unique so that importing a file
-- ledger (the same erasure, the same text) twice adds it once.

CREATE SCHEMA IF NOT EXISTS carnet_erasures;

CREATE TABLE carnet_erasures.entries (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at timestamptz NOT NULL,
    doc text NOT NULL UNIQUE
);
CREATE INDEX entries_by_time ON carnet_erasures.entries (at, seq);

CREATE FUNCTION carnet_erasures.refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the erasure ledger is append-only (% on %)', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER entries_append_only BEFORE UPDATE OR DELETE ON carnet_erasures.entries
    FOR EACH ROW EXECUTE FUNCTION carnet_erasures.refuse_change();
CREATE TRIGGER entries_no_truncate BEFORE TRUNCATE ON carnet_erasures.entries
    FOR EACH STATEMENT EXECUTE FUNCTION carnet_erasures.refuse_change();
