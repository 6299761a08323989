"""Memories: remember, recall (search), assemble and reads, with what they share."""
