"""Extractors and judges: the rules (no LLM) and Mistral over an OpenAI-compatible API (vLLM)."""
