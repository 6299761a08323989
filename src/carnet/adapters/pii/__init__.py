"""PII detection with a model (Presidio + spaCy), behind the ``PiiDetector`` port."""
