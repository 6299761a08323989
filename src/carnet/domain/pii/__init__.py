"""Personal data in memory texts: what it is, how to find it without a model, how it is pseudonymised."""
