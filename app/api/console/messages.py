"""Stored AgentMessages as parts a template can render: text, tool calls, tool results, thinking."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from app.core.rules.messages import TOOL_CALL_BLOCK_TYPES, content_blocks, role_of

ARGUMENT_KEYS = ("arguments", "input", "toolInput", "args")


@dataclass(frozen=True, slots=True)
class Part:
    kind: str  # "text", "tool_call", "thinking", "image", "other"
    text: str
    title: str = ""


@dataclass(frozen=True, slots=True)
class MessageView:
    seq: int
    role: str
    heading: str  # what the message is, in words: "user", "assistant", "tool result: exec (error)"
    is_error: bool
    time: str | None
    parts: list[Part]


def pretty(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)


def _part(block: Any) -> Part | None:
    if isinstance(block, str):
        return Part("text", block)
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return Part("text", text) if isinstance(text, str) and text else None
    if isinstance(kind, str) and kind in TOOL_CALL_BLOCK_TYPES:
        arguments = next((block[k] for k in ARGUMENT_KEYS if k in block), None)
        call_id = block.get("id") or block.get("toolCallId") or ""
        title = f"Tool call: {block.get('name') or 'unknown'}" + (
            f" ({call_id})" if call_id else ""
        )
        return Part("tool_call", pretty(arguments if arguments is not None else {}), title)
    if kind in ("thinking", "redacted_thinking"):
        thinking = block.get("thinking") or block.get("text") or ""
        return Part(
            "thinking", thinking if isinstance(thinking, str) else pretty(thinking), "Thinking"
        )
    if kind in ("image", "image_url"):
        return Part("image", "", "Image")
    return Part("other", pretty(block), f"Block: {kind}")


def message_view(seq: int, message: dict[str, Any]) -> MessageView:
    """The message's heading and its parts in block order."""
    role = role_of(message) or "unknown"
    is_error = message.get("isError") is True
    heading = role
    if role == "toolResult":
        heading = f"Tool result: {message.get('toolName') or 'unknown'}" + (
            " (error)" if is_error else ""
        )
    parts = [p for p in (_part(b) for b in content_blocks(message)) if p is not None]
    return MessageView(seq, role, heading, is_error, _message_time(message), parts)


def _message_time(message: dict[str, Any]) -> str | None:
    """The host's timestamp (milliseconds since the epoch) as UTC text, when it sent one."""
    stamp = message.get("timestamp")
    if isinstance(stamp, int | float) and not isinstance(stamp, bool) and 0 < stamp < 1e14:
        return datetime.fromtimestamp(stamp / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return None
