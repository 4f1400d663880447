"""What a transcript reader yields: sessions of host messages, and the lines it skipped and why. Pure."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True)
class Problem:
    """A line that could not be read: where it is and what is wrong with it."""

    source: str
    line: int
    error: str

    def describe(self) -> str:
        return f"{self.source}:{self.line}: {self.error}"


@dataclass(frozen=True, slots=True)
class HostMessage:
    """One conversation message in the host's AgentMessage shape, with the time the host gave it."""

    message: dict[str, Any]
    at: datetime | None
    heartbeat: bool = False


@dataclass
class TranscriptSession:
    """One session of a transcript store, its messages in the host's order."""

    session_id: str
    source: str
    session_key: str | None = None
    agent_id: str | None = None
    messages: list[HostMessage] = field(default_factory=list)
    # Lines read but not stored, by reason (bookkeeping entries, other branches, ...).
    skipped: dict[str, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def skip(self, reason: str, count: int = 1) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + count


@dataclass
class ReadResult:
    """Every session a path holds, and the problems met on the way (unreadable lines or files)."""

    sessions: list[TranscriptSession] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def extend(self, other: ReadResult) -> None:
        self.sessions.extend(other.sessions)
        self.problems.extend(other.problems)
