"""``options`` of ``/assemble``: per-request overrides of the recall settings (docs/api.md, assemble).

Typed and strict like every hook field the service interprets: ``recallLimit: false`` is a 400,
not a limit of 0. Unknown options are accepted and ignored (permissive hook bodies).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from app.api.schemas.base import WHOLE_NUMBER, HookModel


def _count(low: int, high: int) -> Any:
    # Constraints before the validator, or they drop out of the nullable field's JSON schema.
    return Annotated[int, Field(ge=low, le=high), WHOLE_NUMBER] | None


def _share() -> Any:
    return Annotated[float, Field(ge=0, le=1)] | None


class AgentExperienceOptions(HookModel):
    enabled: bool | None = None
    recall_limit: _count(1, 10) = None
    score_threshold: _share() = None
    max_injected_chars: _count(500, 50000) = None
    min_query_chars: _count(1, 500) = None


class AssembleOptions(HookModel):
    auto_recall: bool | None = None
    recall_limit: _count(1, 50) = None
    recall_score_threshold: _share() = None
    recall_max_injected_chars: _count(100, 50000) = None
    agent_experience: AgentExperienceOptions | None = None

    def as_dict(self) -> dict[str, Any]:
        """The overrides given, by their wire names (what the recall settings read)."""
        return self.model_dump(by_alias=True, exclude_none=True)
