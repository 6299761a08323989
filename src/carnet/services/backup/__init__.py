"""Backups of the store: snapshots, the archive format, restore."""
