"""Reading JSON Lines the way a host wrote them: one object a line, bad lines reported, text made
well-formed, times to datetimes. Pure."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from app.imports.records import Problem

# A millisecond epoch above this is read as milliseconds (year 2001 in ms, year 33658 in s).
_MS_EPOCH_FLOOR = 10**12


@dataclass(frozen=True, slots=True)
class Line:
    number: int
    value: dict[str, Any]


def json_lines(
    lines: Iterable[str], source: str, problems: list[Problem], first_line: int = 1
) -> Iterator[Line]:
    """The JSON objects of ``lines``, numbered from ``first_line``; a blank line is passed over,
    anything else that is not a JSON object is reported in ``problems`` and skipped."""
    for number, text in enumerate(lines, start=first_line):
        if not text.strip():
            continue
        value = parse_object(text, source, number, problems)
        if value is not None:
            yield Line(number, value)


def parse_object(text: str, source: str, number: int, problems: list[Problem]) -> Any:
    """One line as a JSON object made well-formed, or None (reported) when it is not one."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(Problem(source, number, f"not JSON ({exc.msg} at column {exc.colno})"))
        return None
    except ValueError as exc:  # a number too long to convert
        problems.append(Problem(source, number, f"not JSON ({exc})"))
        return None
    if not isinstance(value, dict):
        problems.append(Problem(source, number, "not a JSON object"))
        return None
    # A lone UTF-16 surrogate (text cut inside an emoji) is written as an escape; no UTF-8 text
    # can hold one, so it becomes U+FFFD, as the plugin makes it before a hook request.
    return well_formed(value) if "\\ud" in text or "\\uD" in text else value


def well_formed(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (keys too) replaced by U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    if isinstance(value, list):
        return [well_formed(v) for v in value]
    if isinstance(value, dict):
        return {well_formed(k): well_formed(v) for k, v in value.items()}
    return value


def to_datetime(value: Any) -> datetime | None:
    """A host time: epoch milliseconds (or seconds), or an ISO 8601 string; None when unreadable."""
    if isinstance(value, bool):
        return None
    try:
        if isinstance(value, int | float):
            seconds = value / 1000 if abs(value) >= _MS_EPOCH_FLOOR else value
            return datetime.fromtimestamp(seconds, UTC)
        if isinstance(value, str) and value:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    except (ValueError, OverflowError, OSError):
        return None
    return None


def epoch_ms(at: datetime) -> int:
    """The AgentMessage ``timestamp`` of a time (milliseconds since the epoch)."""
    return int(at.timestamp() * 1000)


def text_blocks(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]
