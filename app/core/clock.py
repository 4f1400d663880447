"""Time in one place, so that tests can reason about it."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    """The current time, aware, in UTC."""
    return datetime.now(UTC)


def isoformat(value: datetime | None) -> str | None:
    """ISO-8601 UTC with a ``Z`` suffix (docs/api.md, Conventions), or None."""
    if value is None:
        return None
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
