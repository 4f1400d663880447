"""Token buckets keyed by name: the per-tenant rate limits (docs/quality.md, Bounded resources).

A handful of lines where a library would bring a storage abstraction this service does not need.
Not thread-safe: the API takes tokens on the event loop only.
"""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


class TokenBuckets:
    """One bucket per key: ``burst`` tokens at most, refilled at ``rate`` tokens per second."""

    def __init__(self) -> None:
        self._buckets: dict[tuple[str, str], _Bucket] = {}

    def take(
        self, key: tuple[str, str], rate: float, burst: int, now: float | None = None
    ) -> float:
        """Take one token; 0 when granted, else the seconds until one is available."""
        now = time.monotonic() if now is None else now
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(float(burst), now)
        bucket.tokens = min(float(burst), bucket.tokens + max(0.0, now - bucket.updated) * rate)
        bucket.updated = now
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            return 0.0
        return (1 - bucket.tokens) / rate
