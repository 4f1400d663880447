"""The ``update_working_memory`` tool: schema, argument parsing and regex salvage.

docs/peers.md, OpenViking §2.6 (schema, argument handling) and §3.10 (salvage of a broken tool call).
"""

from __future__ import annotations

import json
import re
from typing import Any

from app.working_memory.document import WM_SEVEN_SECTIONS

WM_UPDATE_TOOL_NAME = "update_working_memory"


def _op_shape(op: str, extra: dict[str, Any]) -> dict[str, Any]:
    # "enum": [...] rather than "const" for wider JSON Schema support (docs/peers.md, OpenViking §2.6).
    return {
        "type": "object",
        "properties": {"op": {"type": "string", "enum": [op]}, **extra},
        "required": ["op", *extra],
        "additionalProperties": False,
    }


WM_SECTION_OP_SCHEMA: dict[str, Any] = {
    "oneOf": [
        _op_shape("KEEP", {}),
        _op_shape(
            "UPDATE",
            {
                "content": {
                    "type": "string",
                    "description": "The FULL section body, without the '## <section>' header line.",
                }
            },
        ),
        _op_shape(
            "APPEND",
            {
                "items": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "New items without bullet markers; each is rendered as '- <item>'.",
                }
            },
        ),
    ]
}

WM_UPDATE_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": WM_UPDATE_TOOL_NAME,
        "description": (
            "Emit a per-section decision (KEEP / UPDATE / APPEND) for the 7-section Working "
            "Memory document."
        ),
        "parameters": {
            "type": "object",
            "required": ["sections"],
            "additionalProperties": False,
            "properties": {
                "sections": {
                    "type": "object",
                    "required": list(WM_SEVEN_SECTIONS),
                    "additionalProperties": False,
                    "properties": dict.fromkeys(WM_SEVEN_SECTIONS, WM_SECTION_OP_SCHEMA),
                },
                "checkpoint_summaries": {"type": "array", "items": {"type": "string"}},
            },
        },
    },
}

WM_UPDATE_TOOL_CHOICE: dict[str, Any] = {
    "type": "function",
    "function": {"name": WM_UPDATE_TOOL_NAME},
}


def _loads(text: str) -> Any:
    """``json.loads``, then once more after the unbalanced-brace repair; None when both fail."""
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        pass
    # docs/peers.md, OpenViking §2.6: rstrip, rstrip(','), append the missing '}'.
    repaired = text.rstrip().rstrip(",")
    repaired += "}" * max(0, repaired.count("{") - repaired.count("}"))
    try:
        return json.loads(repaired)
    except (ValueError, TypeError):
        return None


def _decode(arguments: Any) -> Any:
    value = _loads(arguments) if isinstance(arguments, str) else arguments
    if isinstance(value, str):
        value = _loads(value)  # a double-encoded JSON string
    if isinstance(value, dict) and set(value) == {"raw"} and isinstance(value["raw"], str):
        value = _loads(value["raw"])  # the backend's wrapper for unparseable JSON
    return value


def raw_arguments_text(arguments: Any) -> str:
    """The text to salvage from: the string itself, a ``{"raw": ...}`` wrapper, or JSON."""
    if isinstance(arguments, str):
        return arguments
    if isinstance(arguments, dict) and isinstance(arguments.get("raw"), str):
        return arguments["raw"]
    try:
        return json.dumps(arguments, ensure_ascii=False)
    except (TypeError, ValueError):
        return ""


def parse_update_arguments(arguments: Any) -> dict[str, Any] | None:
    """Section ops from the tool call's arguments, or None when they cannot be parsed."""
    args = _decode(arguments)
    if not isinstance(args, dict):
        return None
    sections = args.get("sections")
    if isinstance(sections, dict):
        return sections
    if all(name in args for name in WM_SEVEN_SECTIONS):
        return {name: args[name] for name in WM_SEVEN_SECTIONS}
    return None


_NAMES = "|".join(re.escape(name) for name in WM_SEVEN_SECTIONS)
# docs/peers.md, OpenViking §3.10: one pattern per op type.
_KEEP_RE = re.compile(rf'"({_NAMES})"\s*:\s*\{{\s*"op"\s*:\s*"KEEP"\s*\}}')
_UPDATE_RE = re.compile(
    rf'"({_NAMES})"\s*:\s*\{{\s*"op"\s*:\s*"UPDATE"\s*,\s*"content"\s*:\s*"'
    rf'((?:[^"\\]|\\.)*?)(?:"\s*\}}|(?=",\s*"(?:{_NAMES})"))',
    re.DOTALL,
)
_APPEND_RE = re.compile(
    rf'"({_NAMES})"\s*:\s*\{{\s*"op"\s*:\s*"APPEND"\s*,\s*"items"\s*:\s*\[([\s\S]*?)(?:\]|$)'
)
_STRING_RE = re.compile(r'"((?:[^"\\]|\\.)*)"')


def _unescape(capture: str) -> str:
    try:
        value = json.loads('"' + capture + '"')
    except ValueError:
        return capture
    return value if isinstance(value, str) else capture


def recover_ops_from_raw(raw: str | None) -> dict[str, dict[str, Any]]:
    """Regex salvage of a broken tool call; the first hit per section wins (§3.10)."""
    ops: dict[str, dict[str, Any]] = {}
    if not raw:
        return ops
    for match in _KEEP_RE.finditer(raw):
        ops.setdefault(match.group(1), {"op": "KEEP"})
    for match in _UPDATE_RE.finditer(raw):
        ops.setdefault(match.group(1), {"op": "UPDATE", "content": _unescape(match.group(2))})
    for match in _APPEND_RE.finditer(raw):
        # Only complete "..." strings count: a truncated last item is dropped.
        items = [_unescape(s) for s in _STRING_RE.findall(match.group(2))]
        ops.setdefault(match.group(1), {"op": "APPEND", "items": items})
    return ops
