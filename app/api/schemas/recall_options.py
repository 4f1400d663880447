"""``options`` of ``/assemble``: per-request overrides of the recall settings (docs/api.md, assemble).

Typed and strict like every hook field the service interprets: ``recallLimit: false`` is a 400,
not a limit of 0. Unknown options are accepted and ignored (permissive hook bodies).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from app.api.schemas.base import WHOLE_NUMBER, HookModel

# Constraints before the validator, or they drop out of the nullable field's JSON schema.
Share = Annotated[float, Field(ge=0, le=1)] | None
ExperienceLimit = Annotated[int, Field(ge=1, le=10), WHOLE_NUMBER] | None
ExperienceChars = Annotated[int, Field(ge=500, le=50000), WHOLE_NUMBER] | None
QueryChars = Annotated[int, Field(ge=1, le=500), WHOLE_NUMBER] | None
RecallLimit = Annotated[int, Field(ge=1, le=50), WHOLE_NUMBER] | None
RecallChars = Annotated[int, Field(ge=100, le=50000), WHOLE_NUMBER] | None


class AgentExperienceOptions(HookModel):
    enabled: bool | None = None
    recall_limit: ExperienceLimit = None
    score_threshold: Share = None
    max_injected_chars: ExperienceChars = None
    min_query_chars: QueryChars = None


class AssembleOptions(HookModel):
    auto_recall: bool | None = None
    recall_limit: RecallLimit = None
    recall_score_threshold: Share = None
    recall_max_injected_chars: RecallChars = None
    agent_experience: AgentExperienceOptions | None = None

    def as_dict(self) -> dict[str, Any]:
        """The overrides given, by their wire names (what the recall settings read)."""
        return self.model_dump(by_alias=True, exclude_none=True)
