-- Issue 46: a team procedure read from a member's call keeps that member's keyed hash (``origin``,
-- never the member id) and is deleted with the member on erasure, whatever its status. NULL: typed by
-- a person (or adopted by one, who proposed the same text). adapters/sqlite/procedures.py is the reference.
ALTER TABLE carnet.team_procedures ADD COLUMN IF NOT EXISTS origin text COLLATE "C";
CREATE INDEX IF NOT EXISTS team_procedures_origin ON carnet.team_procedures (tenant, origin)
    WHERE origin IS NOT NULL;
