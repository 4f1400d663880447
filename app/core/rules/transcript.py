"""Messages rendered as a plain-text transcript for a model prompt: the Working Memory prompts and
the memory extraction prompts embed the same rendering. Pure."""

from __future__ import annotations

import json
from typing import Any

from app.core.rules.messages import (
    TOOL_CALL_BLOCK_TYPES,
    Message,
    content_blocks,
    role_of,
    tool_result_id,
)

TOOL_OUTPUT_MAX_CHARS = 4000
TEXT_MAX_CHARS = 20000


def render_transcript(messages: list[Message]) -> str:
    """One ``[<role>]: …`` entry per message: text, tool calls with arguments, results with status."""
    names = _tool_names(messages)
    return "\n".join(_render_message(m, names) for m in messages)


def _tool_names(messages: list[Message]) -> dict[str, str]:
    names: dict[str, str] = {}
    for message in messages:
        for block in content_blocks(message):
            if (
                isinstance(block, dict)
                and isinstance(block.get("type"), str)
                and block["type"] in TOOL_CALL_BLOCK_TYPES
                and isinstance(block.get("id"), str)
            ):
                names[block["id"]] = str(block.get("name") or "tool")
    return names


def _render_message(message: Message, names: dict[str, str]) -> str:
    role = role_of(message) or "unknown"
    lines: list[str] = []
    if role == "toolResult":
        call_id = tool_result_id(message) or ""
        name = message.get("toolName") or names.get(call_id, "tool")
        status = "error" if message.get("isError") is True else "completed"
        output = "\n".join(_block_text(b) for b in content_blocks(message) if _block_text(b))
        lines.append(f"[tool:{name} ({status})] {_clip(output, TOOL_OUTPUT_MAX_CHARS)}".rstrip())
        return f"[{role}]: " + "\n".join(lines)
    for block in content_blocks(message):
        if (
            isinstance(block, dict)
            and isinstance(block.get("type"), str)
            and block["type"] in TOOL_CALL_BLOCK_TYPES
        ):
            arguments: Any = next(
                (block[k] for k in ("arguments", "input", "toolInput") if k in block), {}
            )
            lines.append(
                f"[tool call:{block.get('name') or 'tool'}] {json.dumps(arguments, ensure_ascii=False)}"
            )
        elif text := _block_text(block):
            lines.append(_clip(text, TEXT_MAX_CHARS))
    return f"[{role}]: " + ("\n".join(lines) if lines else "(no content)")


def _block_text(block: Any) -> str:
    if isinstance(block, str):
        return block.strip()
    if isinstance(block, dict) and block.get("type") == "text":
        text = block.get("text")
        if isinstance(text, str):
            return text.strip()
    return ""


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f" …[{len(text) - limit} more characters]"
