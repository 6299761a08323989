"""Use cases over the ports: remember, search, assemble, list/get. Orchestration only."""
