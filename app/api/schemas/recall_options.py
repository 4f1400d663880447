"""``options`` of ``/assemble``: per-request overrides of the recall settings (api.md, assemble).

Typed and strict like every hook field the service interprets: ``recallLimit: false`` is a 400,
not a limit of 0. Unknown options are accepted and ignored (permissive hook bodies).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from app.api.schemas.base import WHOLE_NUMBER, HookModel

Count = Annotated[int, WHOLE_NUMBER]


class AgentExperienceOptions(HookModel):
    enabled: bool | None = None
    recall_limit: Count | None = Field(None, ge=1, le=10)
    score_threshold: float | None = Field(None, ge=0, le=1)
    max_injected_chars: Count | None = Field(None, ge=500, le=50000)
    min_query_chars: Count | None = Field(None, ge=1, le=500)


class AssembleOptions(HookModel):
    auto_recall: bool | None = None
    recall_limit: Count | None = Field(None, ge=1, le=50)
    recall_score_threshold: float | None = Field(None, ge=0, le=1)
    recall_max_injected_chars: Count | None = Field(None, ge=100, le=50000)
    agent_experience: AgentExperienceOptions | None = None

    def as_dict(self) -> dict[str, Any]:
        """The overrides given, by their wire names (what the recall settings read)."""
        return self.model_dump(by_alias=True, exclude_none=True)
