"""Message fingerprints and occurrence-aware duplicate detection (docs/lifecycle.md, Capture step 2).

The host's ``prePromptMessageCount`` says where the new messages of a snapshot start, but the
service never trusts it alone: a candidate is stored only when its fingerprint occurs in the
snapshot (up to and including the candidate) more often than the session already holds it.

Counting occurrences instead of asking "is this fingerprint known?" makes three cases hold at once:
sending the same snapshot twice stores nothing the second time; overlapping windows (OpenClaw's
tool loop resends earlier messages) store each message once; and a message genuinely repeated in
one snapshot (for example two identical tool results without timestamps) is stored as often as it
occurs. The stored counts must cover every message of the session, live and archived, because the
host's snapshot still holds messages that were archived since.

Replayed copies are the same message: the host sends stored messages back with tool call ids
rewritten, ``details`` dropped and metadata added, so the fingerprint covers only what a replay
keeps (see ``fingerprint_payload``).

Known limit: a host that forgets older messages of its own transcript and then sends a new message
identical to a stored one (same role, content, tool call id and timestamp) has that message taken
for a duplicate. OpenClaw stamps user and assistant messages with a millisecond timestamp, which
keeps genuine repeats apart.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from app.core.canonical_json import canonical_json
from app.core.rules.messages import TOOL_CALL_BLOCK_TYPES, Message

_TOOL_ID_KEYS = ("toolCallId", "toolUseId")
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")
# What a content block is made of; everything else on a block is presentation the host may change.
_BLOCK_KEYS = {
    "text": ("type", "text"),
    "thinking": ("type", "thinking"),
}
_TOOL_CALL_KEYS = ("type", "name", "arguments", "input")


def replay_tool_id(value: Any) -> Any:
    """A tool call id as every replay spelling shares it: letters and digits only."""
    return _NOT_ALNUM.sub("", value) if isinstance(value, str) else value


def fingerprint_payload(message: Message) -> dict[str, Any]:
    """The fields a fingerprint covers: role, content, timestamp; tool call ids only without one.

    The host replays stored messages with changed tool call ids (sanitised to letters and digits,
    cut or hashed for some providers), host metadata added and ``details`` dropped. A timestamped
    message is identified without its tool call ids; an untimestamped one keeps them, spelt as
    letters and digits, because nothing else tells two identical tool results apart.
    """
    timestamp = message.get("timestamp")
    keep_ids = timestamp is None
    payload: dict[str, Any] = {
        "role": message.get("role"),
        "content": _content(message.get("content"), keep_ids),
    }
    if keep_ids:
        for key in _TOOL_ID_KEYS:
            if message.get(key) is not None:
                payload[key] = replay_tool_id(message[key])
    else:
        payload["timestamp"] = timestamp
    return payload


def _content(content: Any, keep_ids: bool) -> Any:
    """String content and a list of the same text blocks are one content."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return content
    return [_block(block, keep_ids) for block in content]


def _block(block: Any, keep_ids: bool) -> Any:
    if not isinstance(block, dict):
        return block
    kind = block.get("type")
    if not isinstance(kind, str):
        return block
    if kind in TOOL_CALL_BLOCK_TYPES:
        core = {key: block[key] for key in _TOOL_CALL_KEYS if block.get(key) is not None}
        if keep_ids and block.get("id") is not None:
            core["id"] = replay_tool_id(block["id"])
        return core
    keys = _BLOCK_KEYS.get(kind)
    return {key: block[key] for key in keys if key in block} if keys else block


def message_fingerprint(message: Message) -> str:
    """SHA-256 hex of the canonical JSON of the message's identity (docs/lifecycle.md, Capture 2).

    Compute it on the sanitized message, the form that is stored.
    """
    encoded = canonical_json(fingerprint_payload(message)).encode("utf-8")
    return hashlib.sha256(encoded).hexdigest()


def new_message_indexes(
    snapshot_fps: Sequence[str | None],
    start: int,
    stored_counts: Mapping[str, int],
) -> list[int]:
    """Indexes (into ``snapshot_fps``, all ``>= start``) of the candidates that are new.

    ``snapshot_fps`` holds one fingerprint per message of the host's whole snapshot, or None for
    a message that is never stored (skipped or sanitized away): it is neither counted nor
    selected. ``start`` is the clamped ``prePromptMessageCount``. ``stored_counts`` maps a
    fingerprint to how many messages of the session already carry it (missing means 0).

    The candidate at index ``i`` whose fingerprint ``F`` is the n-th occurrence of ``F`` in
    ``snapshot_fps[:i + 1]`` is new iff ``n > stored_counts[F]``. Indexes come back in snapshot
    order, so appending them in that order keeps the host's order.
    """
    start = max(0, start)
    seen: dict[str, int] = {}
    new: list[int] = []
    for index, fp in enumerate(snapshot_fps):
        if fp is None:
            continue
        occurrence = seen.get(fp, 0) + 1
        seen[fp] = occurrence
        if index >= start and occurrence > stored_counts.get(fp, 0):
            new.append(index)
    return new


def fingerprint_counts(fps: Sequence[str]) -> dict[str, int]:
    """How many times each fingerprint occurs (to build ``stored_counts`` from stored messages)."""
    counts: dict[str, int] = {}
    for fp in fps:
        counts[fp] = counts.get(fp, 0) + 1
    return counts
