"""Carnet: sovereign long-term memory for LLM assistants."""

__version__ = "0.1.0"
