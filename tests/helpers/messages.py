"""Builders of OpenClaw AgentMessage dicts for tests."""

from __future__ import annotations

from typing import Any

_clock = {"ms": 1_760_000_000_000}


def _ts() -> int:
    _clock["ms"] += 1000
    return _clock["ms"]


def user(text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": _ts(), **extra}


def assistant(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "stopReason": "stop",
        "timestamp": _ts(),
        **extra,
    }


def tool_call(
    call_id: str, name: str, arguments: dict[str, Any], text: str | None = None
) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks.append({"type": "toolCall", "id": call_id, "name": name, "arguments": arguments})
    return {"role": "assistant", "content": blocks, "stopReason": "toolUse", "timestamp": _ts()}


def tool_result(call_id: str, name: str, output: str, is_error: bool = False) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": output}],
        "isError": is_error,
        "timestamp": _ts(),
    }


def turn(i: int, words: int = 20) -> list[dict[str, Any]]:
    """A user request and an assistant answer, distinct per ``i``."""
    filler = " ".join(f"word{i}_{k}" for k in range(words))
    return [user(f"Request {i}: {filler}"), assistant(f"Answer {i}: {filler}")]
