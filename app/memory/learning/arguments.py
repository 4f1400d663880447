"""The lenient reading of a forced tool call's answer: the arguments of the named call, of any call,
or JSON written as plain content, unwrapping double encoding and wrappers and closing truncated JSON.
"""

from __future__ import annotations

import json
import re
from typing import Any

from app.providers.protocols import ChatResult

_OPENING_FENCE = re.compile(r"^```[a-zA-Z]*\s*")


def tool_arguments(result: ChatResult, name: str) -> Any:
    """The tool's arguments: from its call, any call, or JSON written as plain content."""
    calls = [c for c in result.tool_calls if c.name == name] or list(result.tool_calls)
    if calls:
        return decode_arguments(calls[0].arguments)
    text = without_code_fence((result.content or "").strip())
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    return decode_arguments(text[min(starts) :]) if starts else None


def without_code_fence(text: str) -> str:
    """A stripped text without its opening ```lang and closing ``` fences. The closing one is cut
    by hand: a pattern for it, tried at every position, took time quadratic in a run of blank
    space inside the text (an answer that degenerates into blank lines)."""
    text = _OPENING_FENCE.sub("", text, count=1)
    return text[:-3].rstrip() if text.endswith("```") else text


def decode_arguments(value: Any) -> Any:
    """JSON text or object; unwraps double encoding, ``{"raw": …}`` and ``{"name", "arguments"}``."""
    for _ in range(5):
        if isinstance(value, str):
            value = _loads(value)
        elif isinstance(value, dict) and set(value) == {"raw"}:
            value = value["raw"]
        elif isinstance(value, dict) and isinstance(value.get("function"), dict):
            value = value["function"]
        elif isinstance(value, dict) and "arguments" in value and "name" in value:
            value = value["arguments"]
        else:
            break
    return value


def _loads(text: str) -> Any:
    """``json.loads``, then once more with the missing closing brackets appended; None on failure."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    repaired = text.rstrip().rstrip(",")
    opened: list[str] = []
    for char in re.sub(r'"(?:[^"\\]|\\.)*"', "", repaired):
        if char in "{[":
            opened.append("}" if char == "{" else "]")
        elif char in "}]" and opened and opened[-1] == char:
            opened.pop()
    try:
        return json.loads(repaired + "".join(reversed(opened)))
    except ValueError:
        return None


__all__ = ["decode_arguments", "tool_arguments"]
