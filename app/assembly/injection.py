"""Recall injection into the latest user message (docs/lifecycle.md, Assemble tool_loop phase)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from app.core.rules.messages import Message, role_of
from app.core.rules.redaction import redact_text
from app.core.rules.sanitize import sanitize_text

MAX_QUERY_CHARS = 4000
_SEPARATOR = "\n\n"


def _prefixed_content(content: object, block: str) -> object:
    """The content with ``block`` in front (docs/lifecycle.md, tool_loop step 4)."""
    if isinstance(content, str):
        return block + _SEPARATOR + content
    if isinstance(content, list):
        first = content[0] if content else None
        if (
            isinstance(first, dict)
            and first.get("type") == "text"
            and isinstance(first.get("text"), str)
        ):
            return [{**first, "text": block + _SEPARATOR + first["text"]}, *content[1:]]
        return [{"type": "text", "text": block}, *content]
    # No usable content: the envelope becomes the only block.
    return [{"type": "text", "text": block}]


def prepend_to_latest_user(messages: Sequence[Message], block: str) -> list[Message]:
    """A new list whose last message, a user message, starts with ``block``.

    Every other message is the same object. When the list is empty or its last message is not a
    user message, the messages come back unchanged in a new list (the caller passes through).
    """
    out = list(messages)
    if not out or role_of(out[-1]) != "user":
        return out
    latest = out[-1]
    out[-1] = {**latest, "content": _prefixed_content(latest.get("content"), block)}
    return out


def append_envelope_message(messages: Sequence[Message], block: str) -> list[Message]:
    """A new list ending with a user message that holds only ``block``, dated as the last message.

    For a host that appends the current user message after the returned history: the recalled
    context then sits right before the message it was recalled for.
    """
    out = list(messages)
    last_time = out[-1].get("timestamp") if out and isinstance(out[-1], dict) else None
    timestamp = last_time if isinstance(last_time, int | float) else int(time.time() * 1000)
    out.append(
        {"role": "user", "content": [{"type": "text", "text": block}], "timestamp": timestamp}
    )
    return out


def append_to_last_message(messages: Sequence[Message], block: str) -> list[Message]:
    """A new list whose last message ends with an extra text block (skill memory on a tool result)."""
    out = list(messages)
    last = out[-1]
    content = last.get("content")
    blocks = (
        [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
    )
    out[-1] = {**last, "content": [*blocks, {"type": "text", "text": block}]}
    return out


def _latest_user(messages: Sequence[Message]) -> Message | None:
    for message in reversed(messages):
        if role_of(message) == "user":
            return message
    return None


def latest_user_text(messages: Sequence[Message]) -> str:
    """Raw text of the last user message: its text blocks joined by newlines."""
    latest = _latest_user(messages)
    if latest is None:
        return ""
    content = latest.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]
    return "\n".join(texts)


def recall_query(text: str, max_chars: int = MAX_QUERY_CHARS) -> str:
    """A recall query from a user text: sanitized and collapsed, redacted (it is searched with,
    embedded and echoed in diagnostics), then cut to at most ``max_chars``. CPU work on long
    texts: callers run it off the event loop."""
    # docs/lifecycle.md, tool_loop step 2: sanitized as in capture, then truncated.
    query = redact_text(sanitize_text(text, collapse_whitespace=True))
    return query[: max(0, max_chars)]
