"""Base models of the HTTP contract: camelCase on the wire, permissive where the spec says so."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class ApiModel(BaseModel):
    """Strict about types, camelCase aliases, snake_case attributes."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class HookModel(ApiModel):
    """Hook bodies are the host's parameters forwarded nearly unchanged: unknown keys are ignored."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")


class ErrorBody(ApiModel):
    code: str
    message: str
    details: dict[str, object] = {}


class ErrorEnvelope(ApiModel):
    error: ErrorBody
