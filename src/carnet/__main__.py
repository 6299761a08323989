"""``python -m carnet``: the ``carnet`` command, for a process started with an interpreter's path."""

from carnet.entrypoints.cli.main import app

app()
