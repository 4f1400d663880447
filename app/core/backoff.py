"""Exponential backoff with jitter: the one delay formula of every retry (provider calls and
background jobs)."""

from __future__ import annotations

import random

BASE_DELAY_S = 1.0
MAX_DELAY_S = 8.0
JITTER_RATIO = 0.25


def backoff_delay(
    attempt: int,
    rng: random.Random | None = None,
    *,
    base_s: float = BASE_DELAY_S,
    cap_s: float = MAX_DELAY_S,
) -> float:
    """Delay after failed ``attempt`` (1-based): ``min(cap_s, base_s × 2^(attempt-1))`` seconds plus
    up to 25% jitter drawn from ``rng`` (the module's generator when None)."""
    delay = min(cap_s, base_s * 2.0 ** (max(attempt, 1) - 1))
    draw = rng.uniform if rng is not None else random.uniform
    return delay + draw(0.0, delay * JITTER_RATIO)
