"""Pure domain: records, scoring, reconcile rules, budgets. No I/O here."""
