"""Extraction's model: what is read from messages, the prompts, the schemas, the rules without an LLM."""
