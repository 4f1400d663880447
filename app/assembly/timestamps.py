"""Every message an assemble returns carries a ``timestamp`` (the host sorts and dates by it).

Messages the service adds (the summary, a placeholder between two assistant messages, a synthetic
tool result) take the time of the message they stand next to: the one before them, or for the
first messages the first dated one after them; with no dated message at all, the current time.
Timestamps are epoch milliseconds, as the host sends them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from app.core.rules.messages import Message


def _dated(message: Message) -> int | float | None:
    value = message.get("timestamp")
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def summary_timestamp(following: Sequence[Message]) -> int | float:
    """The summary's time: that of the first dated message after it, else now."""
    for message in following:
        value = _dated(message)
        if value is not None:
            return value
    return int(time.time() * 1000)


def with_timestamps(messages: list[Message]) -> list[Message]:
    """The messages, each undated one replaced by a copy with its neighbour's time."""
    if all(_dated(m) is not None for m in messages if isinstance(m, dict)):
        return messages
    previous: int | float | None = None
    out: list[Message] = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            out.append(message)
            continue
        value = _dated(message)
        if value is None:
            value = previous if previous is not None else summary_timestamp(messages[index + 1 :])
            message = {**message, "timestamp": value}
        previous = value
        out.append(message)
    return out
