"""Transcript import ("backfill"): the history an agent host kept before the service was installed,
read from the host's own store and stored as the hooks would have stored it (docs/api.md, Import)."""
