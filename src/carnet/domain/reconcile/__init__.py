"""Truth maintenance: how a new fact meets the stored ones (slots, topics, values, the decision)."""
