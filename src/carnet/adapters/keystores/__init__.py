"""Wrapped data keys: in files beside the data dir (embedded), or in Vault/OpenBao KV v2."""
