-- Migration 20: the fingerprint of the procedure files last applied (SHA-256 over their
-- names and texts, computed at build time by cmake/embed_sql.cmake). A broker whose
-- procedures match it does not apply them again, so restarting a broker next to others
-- under load takes no lock (docs/operations.md, "Schema application").
CREATE TABLE queen.procedure_bundle (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    fingerprint text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
