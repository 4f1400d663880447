"""Base models of the HTTP contract: camelCase on the wire, permissive where docs/api.md says so."""

from __future__ import annotations

import math
from typing import Annotated, Any

import regex
from pydantic import BaseModel, BeforeValidator, ConfigDict, model_validator
from pydantic.alias_generators import to_camel

# Responses are serialised at most about 250 levels deep; a stored value echoed back must fit.
MAX_JSON_DEPTH = 128
_SURROGATE = regex.compile("[\ud800-\udfff]")


class ApiModel(BaseModel):
    """camelCase aliases, snake_case attributes (request bodies are strict: RequestModel)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


def json_value_problem(value: object, max_depth: int = MAX_JSON_DEPTH) -> str | None:
    """Why a decoded JSON value can be neither stored nor answered, or None when it can.

    JSON may escape a lone UTF-16 surrogate ("\\ud800"), which no UTF-8 text holds: SQLite and the
    response encoder both fail on it. The decoder also reads NaN, Infinity and 1e400 (as infinity),
    which no JSON answer can carry. Nesting is bounded so that every value can be echoed back.
    """
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if type(item) is str:
            if not item.isascii() and (found := _SURROGATE.search(item, concurrent=True)):
                return f"a string holds a lone UTF-16 surrogate (U+{ord(found.group()):04X}); send well-formed Unicode"
            continue
        if type(item) is float:
            if not math.isfinite(item):
                return f"numbers must be finite, not {item}"
            continue
        if type(item) is dict:
            children: Any = [*item, *item.values()]
        elif type(item) is list:
            children = item
        else:
            continue
        if depth >= max_depth:
            return f"JSON is nested deeper than {max_depth} levels"
        stack.extend((child, depth + 1) for child in children)
    return None


def nesting_and_numbers_fit(value: object, max_depth: int = MAX_JSON_DEPTH) -> bool:
    """Whether no container lies ``max_depth`` or more levels down and every float is finite
    (json_value_problem's nesting and number rules; strings are not looked at). A level at a
    time, each in one C-level filter that keeps containers and floats and skips everything else."""
    if type(value) is float:
        return math.isfinite(value)
    level: list[Any] = [value] if type(value) is dict or type(value) is list else []
    for _ in range(max_depth):
        if not level:
            return True
        found = [
            child
            for item in level
            for child in (item.values() if type(item) is dict else item)
            if (kind := type(child)) is dict or kind is list or kind is float
        ]
        floats = [child for child in found if type(child) is float]
        if floats:
            if not all(map(math.isfinite, floats)):
                return False
            found = [child for child in found if type(child) is not float]
        level = found
    return not level


class CheckedJson(dict[str, Any]):
    """A request body object already found storable where it was decoded (app/api/json_body.py):
    the parser read well-formed Unicode and no constant, every float is finite, and its nesting
    is within bounds."""


class RequestBody(ApiModel):
    """A JSON request body: strings of well-formed Unicode, finite numbers, bounded nesting."""

    @model_validator(mode="before")
    @classmethod
    def _storable(cls, data: Any) -> Any:
        if type(data) is CheckedJson:
            return dict(data)
        problem = json_value_problem(data)
        if problem is not None:
            raise ValueError(problem)
        return data


class RequestModel(RequestBody):
    """A request body of the REST endpoints: each value has the JSON type its schema names; no
    coercion of 0 to false, of false to 0 or of "5" to 5."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore", strict=True
    )


def _whole_number(value: object) -> object:
    return int(value) if isinstance(value, float) and value.is_integer() else value


# On an integer field of a RequestModel: JSON Schema counts 5.0 as an integer, strict mode alone would not.
WHOLE_NUMBER = BeforeValidator(_whole_number)
Integer = Annotated[int, WHOLE_NUMBER]


class HookModel(RequestBody):
    """Hook bodies are the host's parameters forwarded nearly unchanged: unknown keys are accepted and
    ignored, but a field the service interprets has the JSON type its schema names (strict: an
    ``isHeartbeat`` of 0, a ``timeoutMs`` of false or a ``tokenBudget`` of false is a 400)."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow", strict=True
    )


class ErrorBody(ApiModel):
    code: str
    message: str
    details: dict[str, object] = {}


class ErrorEnvelope(ApiModel):
    error: ErrorBody
