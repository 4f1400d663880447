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


@dataclass(frozen=True, slots=True)
class RecallBlock:
    text: str
    diagnostics: dict[str, Any] = field(default_factory=dict)


class RecallSource(Protocol):
    async def recall(self, request: RecallRequest) -> RecallBlock | None:
        """The envelope to inject, or None when nothing relevant was found."""
        ...

    async def skill_memory(self, tenant_id: str, agent_id: str, messages: list[Any]) -> str:
        """A ``## Skill Memory`` block when the messages end with a SKILL.md read, else ""."""
        ...

    async def tool_memory(self, tenant_id: str, agent_id: str, tools: list[str]) -> str:
        """A ``## Tool Usage Memories`` block for the available tools, or ""."""
        ...
