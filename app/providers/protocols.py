"""What the domain knows about models: typed errors. Nothing above this layer knows HTTP."""

from __future__ import annotations


class ProviderError(Exception):
    """A model provider call failed."""


class TransientProviderError(ProviderError):
    """Worth retrying: timeouts, connection errors, 429, 5xx."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class PermanentProviderError(ProviderError):
    """Not worth retrying: other 4xx, malformed answers."""
