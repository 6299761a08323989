-- Carnet's control plane on PostgreSQL, version 1: the same tables as the SQLite catalog
-- (adapters/sqlite_catalog.py), intake queue (sqlite_intakes.py) and audit trail (sqlite_audit.py).
--
-- Two schemas, so a dump of one never carries the other: `carnet` (catalog and intakes, restored
-- from a backup) and `carnet_audit` (the hash-chained trail, which a catalog restore must never
-- rewind). Tenants, subjects (keyed hashes) and ids compare byte-wise (COLLATE "C"), as in SQLite,
-- so listings sort the same on both backends whatever the database's locale.
-- JSON columns are text holding json.dumps output, as in SQLite: what was written reads back as is.

CREATE TABLE carnet.api_keys (
    key_id text COLLATE "C" PRIMARY KEY,
    key_hash text NOT NULL UNIQUE,
    tenant text COLLATE "C" NOT NULL,
    roles text NOT NULL,
    created_at timestamptz NOT NULL,
    revoked boolean NOT NULL DEFAULT false,
    rate_limit text,
    name text
);
CREATE INDEX api_keys_by_tenant ON carnet.api_keys (tenant, created_at, key_id);

CREATE TABLE carnet.history (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant text COLLATE "C" NOT NULL,
    subject text COLLATE "C" NOT NULL,
    memory_id text COLLATE "C" NOT NULL,
    at timestamptz NOT NULL,
    action text NOT NULL,
    actor text NOT NULL,
    detail text NOT NULL
);
CREATE INDEX history_by_memory ON carnet.history (tenant, subject, memory_id, seq);

CREATE TABLE carnet.aliases (
    tenant text COLLATE "C" NOT NULL,
    subject text COLLATE "C" NOT NULL,
    alias_id text COLLATE "C" NOT NULL,
    memory_id text COLLATE "C" NOT NULL,
    PRIMARY KEY (tenant, subject, alias_id)
);

CREATE TABLE carnet.subjects (
    tenant text COLLATE "C" NOT NULL,
    subject text COLLATE "C" NOT NULL,
    hash_key text NOT NULL,
    sealed_id bytea NOT NULL,
    PRIMARY KEY (tenant, subject)
);

CREATE TABLE carnet.pseudonyms (
    tenant text COLLATE "C" NOT NULL,
    subject text COLLATE "C" NOT NULL,
    version integer NOT NULL,
    sealed_map bytea NOT NULL,
    PRIMARY KEY (tenant, subject)
);

CREATE TABLE carnet.tenant_hash_keys (
    tenant text COLLATE "C" PRIMARY KEY,
    entry text NOT NULL
);

CREATE TABLE carnet.subject_retention (
    tenant text COLLATE "C" NOT NULL,
    subject text COLLATE "C" NOT NULL,
    legal_hold boolean NOT NULL DEFAULT false,
    hold_since timestamptz,
    hold_reference text,
    relationship_end timestamptz,
    PRIMARY KEY (tenant, subject)
);

-- The intake queue. `seq` orders a subject's intakes; adds of one subject are serialised by an
-- advisory lock (adapters/postgres/intakes.py), so its seq order is also its commit order.
CREATE TABLE carnet.intakes (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id text COLLATE "C" NOT NULL UNIQUE,
    tenant text COLLATE "C" NOT NULL,
    subject text COLLATE "C" NOT NULL,
    session_id text,
    idempotency_key text,
    actor text NOT NULL,
    status text NOT NULL CHECK (status IN ('pending', 'processing', 'done', 'dead')),
    attempts integer NOT NULL DEFAULT 0,
    reason text,
    memory_ids text NOT NULL DEFAULT '[]',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    next_attempt_at timestamptz,
    lease_owner text,
    lease_until timestamptz,
    sealed bytea NOT NULL
);
CREATE UNIQUE INDEX intakes_idempotency ON carnet.intakes (tenant, subject, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
-- A subject's unfinished intakes in order: "is there an older one?" is one probe.
CREATE INDEX intakes_unfinished ON carnet.intakes (tenant, subject, seq)
    WHERE status IN ('pending', 'processing');
-- What a lease scans: due pending intakes, and expired leases.
CREATE INDEX intakes_due ON carnet.intakes (next_attempt_at) WHERE status = 'pending';
CREATE INDEX intakes_leased ON carnet.intakes (lease_until) WHERE status = 'processing';
CREATE INDEX intakes_status ON carnet.intakes (status, seq);

-- The audit trail: one hash chain per tenant; `heads` repeats each chain's last (seq, hash), and an
-- append locks its tenant's head row, so appenders on several nodes never fork a chain.
CREATE SCHEMA IF NOT EXISTS carnet_audit;

CREATE TABLE carnet_audit.entries (
    tenant text COLLATE "C" NOT NULL,
    seq bigint NOT NULL,
    at timestamptz NOT NULL,
    actor text NOT NULL,
    action text NOT NULL,
    subject text,
    targets text NOT NULL,
    outcome text NOT NULL,
    detail text NOT NULL,
    prev_hash text NOT NULL,
    hash text NOT NULL,
    PRIMARY KEY (tenant, seq)
);

CREATE TABLE carnet_audit.heads (
    tenant text COLLATE "C" PRIMARY KEY,
    seq bigint NOT NULL,
    hash text NOT NULL
);

-- Append-only in the database too: an UPDATE, DELETE or TRUNCATE of an entry fails whoever runs it
-- (the hash chain still shows tampering by a role that can drop this trigger).
CREATE FUNCTION carnet_audit.refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the audit trail is append-only (% on %)', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER entries_append_only BEFORE UPDATE OR DELETE ON carnet_audit.entries
    FOR EACH ROW EXECUTE FUNCTION carnet_audit.refuse_change();
CREATE TRIGGER entries_no_truncate BEFORE TRUNCATE ON carnet_audit.entries
    FOR EACH STATEMENT EXECUTE FUNCTION carnet_audit.refuse_change();
