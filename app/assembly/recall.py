"""The recall seam of /assemble: what the tool_loop phase injects, from whatever source is wired."""

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


class NoRecall:
    """The source used until long-term memory is wired: always unavailable."""

    async def recall(self, request: RecallRequest) -> RecallBlock | None:
        raise RecallUnavailable("no recall source is configured")
