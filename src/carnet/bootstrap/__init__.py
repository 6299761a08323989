"""The one composition root: adapters chosen and wired from settings, for serving and offline commands."""
