"""Vector stores: qdrant-edge (embedded), a Qdrant server (qdrant-client), the payload both share."""
