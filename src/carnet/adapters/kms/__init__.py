"""Key-encryption keys: the dev key file, Vault/OpenBao Transit, an HSM over PKCS#11."""
