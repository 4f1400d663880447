"""The recall seam of /assemble: what is asked of a recall source, what it gives back, and the
source's protocol. Pure types, shared by the assembly (which asks) and memory (which answers)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


class RecallUnavailable(Exception):
    """No recall source is wired (diagnostics reason ``recall_unavailable``)."""


@dataclass(frozen=True, slots=True)
class RecallRequest:
    tenant_id: str
    user_id: str
    agent_id: str
    query: str
    is_cron: bool
    options: dict[str, Any] = field(default_factory=dict)
    # Archive recall (docs/recall.md): the session searched, the texts of the messages the prompt
    # already holds (never recalled again), and the tokens the recalled text may take (None: only
    # the character limits bound it).
    session_id: str | None = None
    shown: tuple[str, ...] = ()
    budget_tokens: int | None = None
    # The section that resolves the relative dates of the history's sentences the query touches.
    history_dates: str = ""


@dataclass(frozen=True, slots=True)
class RecallBlock:
    text: str
    diagnostics: dict[str, Any] = field(default_factory=dict)
    # The envelope's non-empty sections in order, for a source that adds its own to the envelope.
    sections: tuple[str, ...] = ()


class RecallSource(Protocol):
    async def recall(self, request: RecallRequest) -> RecallBlock | None:
        """The envelope to inject, or None when nothing relevant was found."""
        ...

    async def skill_memory(self, tenant_id: str, agent_id: str, messages: list[Any]) -> str:
        """A ``## Skill Memory`` block when the messages end with a SKILL.md read, else ""."""
        ...

    def prepare(self, request: RecallRequest, session_id: str) -> None:
        """Start, without waiting, what a later ``recall`` of ``request`` for the session's
        archived turns will need (its query's embedding); nothing when there is nothing to do."""
        ...

    async def tool_memory(self, tenant_id: str, agent_id: str, tools: list[str]) -> str:
        """A ``## Tool Usage Memories`` block for the available tools, or ""."""
        ...
