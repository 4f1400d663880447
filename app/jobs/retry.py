"""Retry decisions for background work: exponential backoff with jitter, honouring Retry-After."""

from __future__ import annotations

import random
from dataclasses import dataclass

from sqlalchemy.exc import OperationalError

from app.core.backoff import backoff_delay
from app.db.storage import storage_problem
from app.providers.protocols import TransientProviderError


@dataclass(frozen=True, slots=True)
class RetryDecision:
    retry: bool
    delay_s: float = 0.0
    # A storage failure (disk full, read-only file) is not the job's: its attempt is given back.
    refund_attempt: bool = False


# Storage failures that last until an operator acts; a busy database is an ordinary transient error.
OPERATOR_FIXABLE = frozenset({"disk_full", "read_only", "io_error", "cannot_open", "unreachable"})


@dataclass(frozen=True, slots=True)
class RetryStrategy:
    """``base × 2^(attempt-1)`` capped, plus up to 25% jitter; at most ``max_attempts`` in all."""

    max_attempts: int = 4
    base_s: float = 1.0
    cap_s: float = 8.0
    storage_retry_after_s: float = 30.0

    def decide(
        self, error: BaseException, attempt: int, rng: random.Random | None = None
    ) -> RetryDecision:
        if storage_problem(error) in OPERATOR_FIXABLE:
            # Until an operator frees space or fixes permissions, however long that takes.
            return RetryDecision(
                retry=True, delay_s=self.storage_retry_after_s, refund_attempt=True
            )
        if not is_transient(error) or attempt >= self.max_attempts:
            return RetryDecision(retry=False)
        delay = backoff_delay(attempt, rng, base_s=self.base_s, cap_s=self.cap_s)
        retry_after = getattr(error, "retry_after", None)
        if isinstance(retry_after, int | float) and retry_after > delay:
            delay = float(retry_after)
        return RetryDecision(retry=True, delay_s=delay)


def is_transient(error: BaseException) -> bool:
    """Provider hiccups and a busy database are worth another attempt; bugs are not."""
    return isinstance(error, TransientProviderError | OperationalError | TimeoutError)
