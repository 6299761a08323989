"""The roles a key may carry, as the door checks them (docs/architecture.md, "Entrypoints, roles and audit")."""

AGENT, DPO, ADMIN, SUPERVISOR = "agent", "dpo", "admin", "supervisor"
