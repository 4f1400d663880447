"""Read-only views over OpenClaw ``AgentMessage`` objects (plain dicts).

Messages are stored and returned verbatim; these helpers only look at them: the prompt-visible
text (for token estimates and search), tool calls and tool-result ids (for pairing).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from app.core.rules.tokens import estimate_text_tokens

# Block types that carry a tool call, across providers' transcript variants (docs/peers.md, OpenClaw §1.9).
TOOL_CALL_BLOCK_TYPES = frozenset(
    {"toolCall", "toolUse", "tool_use", "functionCall", "function_call", "tool_call"}
)
DEFAULT_IMAGE_TOKENS = 1000

Message = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolCallRef:
    id: str
    name: str
    arguments: Any


def role_of(message: Message) -> str:
    role = message.get("role")
    return role if isinstance(role, str) else ""


def content_blocks(message: Message) -> list[Any]:
    """The content as a list of blocks; a string content becomes one text block."""
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return content
    return []


def _block_call_id(block: dict[str, Any]) -> str | None:
    for key in ("id", "toolCallId", "toolUseId", "call_id"):
        value = block.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _block_call_arguments(block: dict[str, Any]) -> Any:
    for key in ("arguments", "input", "toolInput", "args"):
        if key in block:
            return block[key]
    return None


def tool_calls(message: Message) -> list[ToolCallRef]:
    """Tool calls of an assistant message, in block order (blocks without an id are ignored)."""
    if role_of(message) != "assistant":
        return []
    calls: list[ToolCallRef] = []
    for block in content_blocks(message):
        if not isinstance(block, dict) or not _is_kind(block, TOOL_CALL_BLOCK_TYPES):
            continue
        call_id = _block_call_id(block)
        if call_id is None:
            continue
        name = block.get("name")
        calls.append(
            ToolCallRef(
                call_id, name if isinstance(name, str) else "", _block_call_arguments(block)
            )
        )
    return calls


def tool_result_id(message: Message) -> str | None:
    """The tool call id that a ``toolResult`` message answers."""
    if role_of(message) != "toolResult":
        return None
    for key in ("toolCallId", "toolUseId"):
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _arguments_text(arguments: Any) -> str:
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False, sort_keys=True)


def _is_kind(block: dict[str, Any], kinds: frozenset[str]) -> bool:
    kind = block.get("type")
    return isinstance(kind, str) and kind in kinds


def _block_text(block: Any) -> str:
    """Prompt-visible text of one block; images and thinking have none."""
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if not isinstance(kind, str):
        kind = ""
    if kind == "text":
        text = block.get("text")
        return text if isinstance(text, str) else ""
    if kind in TOOL_CALL_BLOCK_TYPES:
        name = block.get("name")
        name_text = name if isinstance(name, str) else ""
        return f"{name_text} {_arguments_text(_block_call_arguments(block))}".strip()
    if kind in ("thinking", "redacted_thinking", "image", "image_url"):
        return ""
    if kind in ("tool_result", "function_call_output"):
        inner = block.get("content", block.get("output"))
        if isinstance(inner, list):
            return "\n".join(t for t in (_block_text(b) for b in inner) if t)
        return inner if isinstance(inner, str) else ""
    text = block.get("text")
    return text if isinstance(text, str) else ""


def message_text(message: Message) -> str:
    """All prompt-visible text of a message, blocks joined by newlines."""
    pieces = [t for t in (_block_text(b) for b in content_blocks(message)) if t]
    summary = message.get("summary")
    if not pieces and isinstance(summary, str):
        pieces.append(summary)
    return "\n".join(pieces)


def count_images(message: Message) -> int:
    return sum(
        1
        for block in content_blocks(message)
        if isinstance(block, dict) and _is_kind(block, frozenset({"image", "image_url"}))
    )


def message_tokens(message: Message, image_tokens: int = DEFAULT_IMAGE_TOKENS) -> int:
    """Estimated tokens of a message: its prompt-visible text plus a fixed cost per image."""
    return estimate_text_tokens(message_text(message)) + image_tokens * count_images(message)
