"""OpenClaw transcript events to host messages. Pure.

The host writes one event per transcript entry, the same JSON in the 2026.9 agent database
(``transcript_events``) as in the JSON Lines session files of older hosts: a ``session`` header,
then ``message`` entries (``{"type": "message", "id", "parentId", "timestamp", "message": <the
AgentMessage>}``) among bookkeeping entries (``model_change``, ``thinking_level_change``,
``custom``, ``compaction``, ...). Entries form a tree through ``parentId``; the conversation is
the branch that ends at the last entry (a rewind leaves the abandoned branch in the file).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from app.core.rules.sanitize import is_conversation_message
from app.imports.lines import Line, to_datetime
from app.imports.records import HostMessage, TranscriptSession

HEARTBEAT_TOOL = "heartbeat"


def session_header(value: dict[str, Any]) -> str | None:
    """The session id of a ``session`` header entry, else None."""
    if value.get("type") == "session" and isinstance(value.get("id"), str) and value["id"]:
        return str(value["id"])
    return None


def add_events(session: TranscriptSession, events: Iterable[Line]) -> None:
    """Append the conversation messages of ``events`` (in order) to ``session``; count the rest."""
    entries = list(events)
    on_branch = _active_branch(entries)
    for index, entry in enumerate(entries):
        value = entry.value
        kind = value.get("type")
        if kind == "session":
            session.skip("session header")
        elif kind != "message":
            session.skip(f"bookkeeping entry ({kind or 'no type'})")
        elif index not in on_branch:
            session.skip("not on the conversation's branch (rewound)")
        else:
            _add_message(session, entry)


def _add_message(session: TranscriptSession, entry: Line) -> None:
    message = entry.value.get("message")
    if not isinstance(message, dict):
        session.skip("message entry without a message")
        return
    if not is_conversation_message(message):
        session.skip(f"bookkeeping message (role {message.get('role') or 'none'})")
        return
    at = to_datetime(message.get("timestamp")) or to_datetime(entry.value.get("timestamp"))
    session.messages.append(HostMessage(message, at, heartbeat=is_heartbeat(message)))


def is_heartbeat(message: dict[str, Any]) -> bool:
    """A heartbeat prompt: the host marks it with its provenance (the hooks store no such turn)."""
    provenance = message.get("provenance")
    return (
        message.get("role") == "user"
        and isinstance(provenance, dict)
        and provenance.get("sourceTool") == HEARTBEAT_TOOL
    )


def _active_branch(entries: list[Line]) -> set[int]:
    """Indexes of the entries on the path from the last entry with an id back to the root; every
    index when the entries carry no tree (ids missing) or the path is broken."""
    index_of: dict[str, int] = {}
    for index, entry in enumerate(entries):
        entry_id = entry.value.get("id")
        if isinstance(entry_id, str) and entry.value.get("type") != "session":
            index_of[entry_id] = index
    if not index_of:
        return set(range(len(entries)))
    path: set[int] = set()
    current: int | None = max(index_of.values())
    while current is not None and current not in path:
        path.add(current)
        parent = entries[current].value.get("parentId")
        if isinstance(parent, str) and parent not in index_of:
            return set(range(len(entries)))  # a dangling parent: no tree to trust
        current = index_of.get(parent) if isinstance(parent, str) else None
    # Entries without an id (and the header) belong to no branch: they are kept.
    path.update(i for i, e in enumerate(entries) if not isinstance(e.value.get("id"), str))
    path.update(i for i, e in enumerate(entries) if e.value.get("type") == "session")
    return path
