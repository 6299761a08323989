"""Messages queued for extraction and the worker that turns them into memories."""
