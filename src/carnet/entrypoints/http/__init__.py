"""The REST edge: FastAPI app, auth, schemas, error mapping."""
