"""Upkeep: maintenance, the scheduler, re-embedding, re-hashing, key rotation, evictions."""
