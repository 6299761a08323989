"""Field encryption: AES-256-GCM envelopes (``envelope``), per-subject data keys (``keyring``) and
the store that keeps them wrapped, outside data backups (``keystore``).

Only the ``cryptography`` package touches key material; the KMS sits behind ``carnet.ports.Kms``.
"""
