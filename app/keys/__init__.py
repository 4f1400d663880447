"""API keys stored by the service: made, listed and revoked by operators, checked on every request."""
