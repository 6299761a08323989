"""Settings: the root ``Settings`` and its groups (pydantic-settings, ``CARNET_`` environment)."""
