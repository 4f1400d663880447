"""The transcript store the real OpenClaw 2026.9.6 host wrote in a run of its own (four turns, one
of them a real ``read`` tool call, one answer cut inside an emoji, one prompt long enough to be
stored zstd-compressed), and what the live hooks stored for that session in the same run.

``tests/fixtures/openclaw-2026.9/agents/main/agent/openclaw-agent.sqlite`` is the host's agent
database less the tables no transcript reader needs (memory indexes, boards, auth), with the run's
temporary folder written as ``/home/demo/.openclaw-fixture``. ``live-stored.json`` holds the
messages the service stored from the plugin's ``commitTurn`` calls in that run, in order.
``tests/helpers/record_host_store.py`` records both again from the real host."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import zstandard

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "openclaw-2026.9"
AGENT_DB = FIXTURE / "agents" / "main" / "agent" / "openclaw-agent.sqlite"


def live_stored() -> list[dict[str, Any]]:
    return list(json.loads((FIXTURE / "live-stored.json").read_text(encoding="utf-8")))


def session_id() -> str:
    return str(live_stored()[0]["sessionId"])


def event_lines() -> list[str]:
    """The session's events, one JSON text a line, as the host stored them (decompressed)."""
    db = sqlite3.connect(f"{AGENT_DB.as_uri()}?mode=ro", uri=True)
    try:
        rows = db.execute(
            "SELECT event_json, event_zstd FROM transcript_events WHERE session_id = ? ORDER BY seq",
            (session_id(),),
        ).fetchall()
    finally:
        db.close()
    out = []
    for text, frame in rows:
        if text is None:
            text = zstandard.ZstdDecompressor().decompress(frame, max_output_size=1 << 24).decode()
        out.append(text)
    return out
