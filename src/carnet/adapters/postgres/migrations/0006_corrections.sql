-- Issue 47: a person's restore of a superseded record kept as a labelled pair, sealed under the
-- subject's data key (the control plane never sees its text), per tenant and subject: erased and
-- moved with the subject's other rows. adapters/sqlite/catalog.py is the reference.
CREATE TABLE IF NOT EXISTS carnet.corrections (
    tenant text COLLATE "C" NOT NULL,
    subject text COLLATE "C" NOT NULL,
    id text COLLATE "C" NOT NULL,
    at timestamptz NOT NULL,
    sealed bytea NOT NULL,
    PRIMARY KEY (tenant, subject, id)
);
CREATE INDEX IF NOT EXISTS corrections_by_tenant ON carnet.corrections (tenant, at, id);
