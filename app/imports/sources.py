"""The transcript formats an import reads, by name: from a path, or from JSON Lines text."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from app.imports.claude_code import claude_code_sessions, read_claude_code
from app.imports.codex import codex_session, read_codex
from app.imports.lines import json_lines
from app.imports.openclaw import read_openclaw
from app.imports.openclaw_events import add_events, session_header
from app.imports.records import ReadResult, TranscriptSession

Source = Literal["openclaw", "claude-code", "codex"]
# The id of a session whose transcript names none (and the request gave none).
UNNAMED = ""
SOURCES: tuple[Source, ...] = ("openclaw", "claude-code", "codex")

READERS: dict[Source, Callable[[Path], ReadResult]] = {
    "openclaw": read_openclaw,
    "claude-code": read_claude_code,
    "codex": read_codex,
}


def read_path(source: Source, path: Path) -> ReadResult:
    return READERS[source](path)


def read_lines(source: Source, lines: list[str], name: str, session_id: str | None) -> ReadResult:
    """One transcript sent as JSON Lines (the HTTP import): the lines of one session file (an
    OpenClaw session's events, as ``transcript_events`` or a ``.jsonl`` file holds them)."""
    default_id = session_id or UNNAMED
    if source == "claude-code":
        result = claude_code_sessions(lines, name, default_id)
    elif source == "codex":
        result = codex_session(lines, name, default_id)
    else:
        result = ReadResult()
        events = list(json_lines(lines, name, result.problems))
        header = next((session_header(e.value) for e in events[:1]), None)
        session = TranscriptSession(header or default_id, name)
        add_events(session, events)
        result.sessions.append(session)
    if session_id is not None:
        for session in result.sessions:
            session.session_id = session_id
    return result
