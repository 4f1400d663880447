"""Capture's first step, before the write lock: sanitize a turn's new messages and fingerprint
them, with the earlier snapshot messages that could share a fingerprint (docs/lifecycle.md,
Capture)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core.rules.fingerprint import message_fingerprint
from app.core.rules.messages import Message
from app.core.rules.sanitize import is_conversation_message, sanitize_message_for_capture
from app.sessions.stored_form import StoredForm


@dataclass(slots=True)
class PreparedTurn:
    """A turn's candidate messages sanitized, and the fingerprints dedupe compares."""

    fingerprints: list[str | None]
    sanitized: dict[int, Message]
    skipped: int
    forms: dict[int, StoredForm] = field(default_factory=dict)


def prepare_turn(messages: list[Any], start: int) -> PreparedTurn:
    """Sanitize the candidates and fingerprint every snapshot message that could match one."""
    fingerprints: list[str | None] = [None] * len(messages)
    sanitized: dict[int, Message] = {}
    skipped = 0
    for index in range(start, len(messages)):
        clean = _sanitized(messages[index])
        if clean is None:
            skipped += 1
            continue
        sanitized[index] = clean
        fingerprints[index] = message_fingerprint(clean)
    # Earlier snapshot messages only matter when they could share a candidate's fingerprint;
    # role, tool call id and timestamp survive sanitation, so they are a cheap first filter.
    candidate_keys = {_cheap_key(m) for m in sanitized.values()}
    for index in range(start):
        message = messages[index]
        if isinstance(message, dict) and _cheap_key(message) in candidate_keys:
            clean = _sanitized(message)
            fingerprints[index] = message_fingerprint(clean) if clean is not None else None
    return PreparedTurn(fingerprints, sanitized, skipped)


def _sanitized(message: Any) -> Message | None:
    if not is_conversation_message(message):
        return None
    return sanitize_message_for_capture(message)


def _cheap_key(message: Message) -> tuple[str, str, str, str]:
    # As strings: a host may send any JSON value here, and a list or an object is not hashable.
    # Written out, not a generator: it runs for every message of every snapshot (bench/RESULTS.md,
    # Measurements behind the code).
    get = message.get
    return (str(get("role")), str(get("toolCallId")), str(get("toolUseId")), str(get("timestamp")))
