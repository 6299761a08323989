-- Team procedures (issue 18): how the team handles a case, proposed, approved by a supervisor, retired.
-- Control-plane data of the tenant, not personal data (a text in which the PII detector finds personal
-- data is refused before it gets here). A proposal is made once: the live index over (tenant, folded
-- text) of the procedures still proposed or approved. adapters/sqlite_procedures.py is the reference.
CREATE TABLE IF NOT EXISTS carnet.team_procedures (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id text COLLATE "C" NOT NULL UNIQUE,
    tenant text COLLATE "C" NOT NULL,
    text text NOT NULL,
    dedup_key text COLLATE "C" NOT NULL,
    status text NOT NULL CHECK (status IN ('proposed', 'approved', 'rejected', 'retired')),
    agent_id text COLLATE "C",
    queue text COLLATE "C",
    applies_when text NOT NULL DEFAULT '[]',
    proposed_by text NOT NULL,
    decided_by text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS team_procedures_live ON carnet.team_procedures (tenant, dedup_key)
    WHERE status IN ('proposed', 'approved');
CREATE INDEX IF NOT EXISTS team_procedures_status ON carnet.team_procedures (tenant, status, seq);
