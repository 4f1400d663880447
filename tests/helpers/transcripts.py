"""OpenClaw transcripts written as the host writes them (its session events, JSON Lines), of any
size: the import tests and the import benchmark read them."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

BASE_MS = 1_790_000_000_000  # 2026-09-21


def session_events(session_id: str, messages: int, start_ms: int = BASE_MS) -> list[dict[str, Any]]:
    """A session header, then turns of user prompt, tool call, tool result and answer (with the
    host's bookkeeping entries between them) until ``messages`` conversation messages."""
    events: list[dict[str, Any]] = [
        {"type": "session", "version": 4, "id": session_id, "timestamp": _iso(start_ms)}
    ]
    parent: str | None = None
    count = 0
    turn = 0
    while count < messages:
        turn += 1
        t = start_ms + turn * 60_000
        call = f"call_{turn}"
        turn_messages = [
            {
                "role": "user",
                "content": f"Turn {turn}: where is the deploy key for shard {turn}?",
                "timestamp": t,
            },
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "toolCall",
                        "id": call,
                        "name": "read",
                        "arguments": {"path": f"notes/{turn}.md"},
                    }
                ],
                "timestamp": t + 1000,
            },
            {
                "role": "toolResult",
                "toolCallId": call,
                "toolName": "read",
                "content": [
                    {
                        "type": "text",
                        "text": f"Shard {turn} keys live in vault path kv/shard-{turn}.",
                    }
                ],
                "isError": False,
                "timestamp": t + 2000,
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"The key of shard {turn} is in kv/shard-{turn}."}
                ],
                "timestamp": t + 3000,
            },
        ][: messages - count]
        for message in turn_messages:
            entry_id = uuid.uuid4().hex[:8]
            events.append(
                {
                    "type": "message",
                    "id": entry_id,
                    "parentId": parent,
                    "timestamp": _iso(message["timestamp"]),
                    "message": message,
                }
            )
            parent = entry_id
            count += 1
        entry_id = uuid.uuid4().hex[:8]
        events.append(
            {
                "type": "custom",
                "customType": "openclaw:bootstrap-context:full",
                "data": {},
                "id": entry_id,
                "parentId": parent,
                "timestamp": _iso(t + 3500),
            }
        )
        parent = entry_id
    return events


def write_sessions(folder: Path, sessions: int, messages_each: int) -> list[str]:
    """``agents/main/sessions/<id>.jsonl`` files under ``folder`` (an older host's layout)."""
    target = folder / "agents" / "main" / "sessions"
    target.mkdir(parents=True, exist_ok=True)
    ids = []
    for index in range(sessions):
        session_id = str(uuid.UUID(int=index + 1))
        events = session_events(session_id, messages_each, BASE_MS + index * 86_400_000)
        (target / f"{session_id}.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
        ids.append(session_id)
    return ids


def _iso(ms: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, UTC).isoformat().replace("+00:00", "Z")
