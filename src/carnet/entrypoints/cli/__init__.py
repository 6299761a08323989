"""The ``carnet`` command (typer): one module per command group, shared helpers in ``common``."""
