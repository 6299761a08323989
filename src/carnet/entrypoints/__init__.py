"""Entrypoints: HTTP (REST, console), MCP and the CLI. They translate; the facade's use cases decide."""
