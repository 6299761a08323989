"""Benchmarks and calibration: LoCoMo-style recall, latency, reconcile thresholds."""
