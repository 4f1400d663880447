"""Text renderings of archives and search results, ready to be a model's tool result (docs/api.md)."""

from __future__ import annotations

import json
from typing import Any

from app.archives.read.results import SearchHit
from app.core.clock import isoformat
from app.core.rules.messages import TOOL_CALL_BLOCK_TYPES, Message, content_blocks, role_of

NO_MATCH_HINT = (
    "Try a different keyword: the original conversation may use different wording than the "
    "question. Try synonyms, related terms, or shorter fragments."
)


def _pretty(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)


def _render_block(block: Any) -> str | None:
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return text if isinstance(text, str) and text else None
    if isinstance(kind, str) and kind in TOOL_CALL_BLOCK_TYPES:  # the host may send any JSON value
        args = next(
            (block[k] for k in ("arguments", "input", "toolInput", "args") if k in block), None
        )
        return f"[Tool: {block.get('name') or 'unknown'}]\nInput: {_pretty(args if args is not None else {})}"
    if kind in ("thinking", "redacted_thinking"):
        return None
    if kind in ("image", "image_url"):
        return "[image]"
    return f"[{kind}]: {json.dumps(block, ensure_ascii=False)}"


def render_message(message: Message) -> str:
    """``[<role>]:`` then the message's text; tool calls and tool results spelled out."""
    role = role_of(message) or "unknown"
    parts = [p for p in (_render_block(b) for b in content_blocks(message)) if p]
    body = "\n".join(parts)
    if role == "toolResult":
        name = message.get("toolName") or "unknown"
        status = " (error)" if message.get("isError") is True else ""
        return f"[{role}]:\n[Tool result: {name}]{status}\nOutput:\n{body}"
    return f"[{role}]:\n{body if body else '(empty)'}"


def render_archive_text(archive_id: str, abstract: str, messages: list[Message]) -> str:
    """The expand tool's text: header, a blank line, then every message, blank-line separated."""
    header = [f"## {archive_id}"]
    if abstract:
        header.append(f"**Summary**: {abstract}")
    header.append(f"**Messages**: {len(messages)}")
    return "\n".join(header) + "\n\n" + "\n\n".join(render_message(m) for m in messages) + "\n"


def render_search_text(
    query: str,
    results: list[SearchHit],
    truncated: bool,
    overviews: list[SearchHit] | None = None,
) -> str:
    """The search tool's text: a count line, one block per message match (with the time it was
    said and any neighbours asked for), then the matching overviews."""
    overviews = overviews or []
    if not results and not overviews:
        return f'No matches found for "{query}". {NO_MATCH_HINT}\n'
    head = f'Found {len(results)} match(es) for "{query}"'
    if truncated:
        head += f" (showing first {len(results)})"
    blocks = [head + ":"]
    for i, hit in enumerate(results, start=1):
        stamp = isoformat(hit.timestamp)
        when = f", {_day_time(stamp)}" if stamp else ""
        block = (
            f"## Match {i}: {hit.archive_id} (message {hit.seq}, {hit.role}{when})\n{hit.snippet}"
        )
        if hit.context:
            lines = [f"[message {n.seq}, {n.role}] {n.text}" for n in hit.context]
            block += "\nContext:\n" + "\n".join(lines)
        blocks.append(block)
    for hit in overviews:
        blocks.append(f"## Overview: {hit.archive_id}\n{hit.snippet}")
    return "\n\n".join(blocks) + "\n"


def _day_time(iso: str) -> str:
    """``2023-05-08T14:00:00.000Z`` as ``2023-05-08 14:00 UTC``."""
    return f"{iso[:10]} {iso[11:16]} UTC" if len(iso) >= 16 else iso
