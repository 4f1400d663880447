"""The data of the recall seam of /assemble: what is asked of a recall source and what it gives
back. Pure types, shared by the assembly (which asks) and memory (which answers)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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
