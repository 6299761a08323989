"""The embedded control plane on SQLite: catalog, audit chain, intakes, team procedures."""
