"""A Vault/OpenBao session and its auth methods, shared by the Transit KMS and the KV key store."""
