"""One-process stand-ins of shared services: the erasure ledger file, local invalidations, calibration files."""
