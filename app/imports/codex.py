"""Codex CLI session files ("rollouts") to host messages. Pure apart from reading the files.

Codex writes ``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<sessionId>.jsonl``: every line is
``{"timestamp": <ISO 8601>, "type", "payload"}``. The first is ``session_meta`` (its ``payload.id``
is the session id); the conversation is in ``response_item`` lines whose payload is a Responses
API item: ``message`` (role user or assistant, ``input_text``/``output_text`` parts),
``function_call`` (``name``, ``arguments`` as a JSON string, ``call_id``),
``function_call_output`` (``call_id``, ``output``), ``custom_tool_call``/``custom_tool_call_output``
and ``local_shell_call``. Older rollouts wrote the items themselves, one a line, after a first line
``{"id", "timestamp", "instructions"}``; they are read too. ``event_msg`` and ``turn_context`` lines repeat or describe the run
(bookkeeping), and so do ``reasoning`` items (encrypted), ``developer`` messages and the user
messages Codex writes itself (``<environment_context>``, ``<user_instructions>``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.imports.files import read_session_files
from app.imports.lines import Line, epoch_ms, json_lines, text_blocks, to_datetime
from app.imports.records import HostMessage, ReadResult, TranscriptSession

_HOST_CONTEXT = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions")
_CALLS = ("function_call", "custom_tool_call", "local_shell_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output")
_ITEMS = ("message", "reasoning", *_CALLS, *_OUTPUTS)


def read_codex(path: Path) -> ReadResult:
    """Every rollout file under ``path`` (the sessions folder, a day folder or one file)."""
    return read_session_files(path, codex_session, "Codex session")


def codex_session(lines: Any, source: str, default_id: str) -> ReadResult:
    result = ReadResult()
    session = TranscriptSession(default_id, source)
    names: dict[str, str] = {}  # call_id -> tool name
    for line in json_lines(lines, source, result.problems):
        kind, payload = line.value.get("type"), line.value.get("payload")
        if kind == "session_meta" and isinstance(payload, dict) and payload.get("id"):
            session.session_id = str(payload["id"])
            session.skip("session header")
        elif kind is None and line.number == 1 and line.value.get("id"):
            session.session_id = str(line.value["id"])  # an older rollout's first line
            session.skip("session header")
        elif kind in _ITEMS and payload is None:
            _add_item(session, line, line.value, names)  # an older rollout: the item itself
        elif kind != "response_item" or not isinstance(payload, dict):
            session.skip(f"bookkeeping entry ({kind or 'no type'})")
        else:
            _add_item(session, line, payload, names)
    result.sessions.append(session)
    return result


def _add_item(
    session: TranscriptSession, line: Line, item: dict[str, Any], names: dict[str, str]
) -> None:
    at = to_datetime(line.value.get("timestamp"))
    stamp = {"timestamp": epoch_ms(at)} if at is not None else {}
    kind = item.get("type")
    if kind == "message":
        message = _message(item, stamp)
        if message is None:
            session.skip(f"host context message ({item.get('role') or 'no role'})")
        else:
            session.messages.append(HostMessage(message, at))
    elif kind in _CALLS:
        call = _call(item)
        names[call["id"]] = call["name"]
        session.messages.append(HostMessage({"role": "assistant", "content": [call], **stamp}, at))
    elif kind in _OUTPUTS:
        call_id = str(item.get("call_id") or "")
        result = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": names.get(call_id, "tool"),
            "content": text_blocks(_output_text(item.get("output"))),
            "isError": False,
            **stamp,
        }
        session.messages.append(HostMessage(result, at))
    else:
        session.skip(f"bookkeeping item ({kind or 'no type'})")


def _message(item: dict[str, Any], stamp: dict[str, Any]) -> dict[str, Any] | None:
    role = item.get("role")
    if role not in ("user", "assistant"):
        return None
    parts = item.get("content")
    blocks = parts if isinstance(parts, list) else []
    text = "\n".join(
        str(p.get("text") or "")
        for p in blocks
        if isinstance(p, dict) and p.get("type") in ("input_text", "output_text", "text")
    )
    if role == "user" and text.lstrip().startswith(_HOST_CONTEXT):
        return None
    if role == "user":
        return {"role": "user", "content": text, **stamp}
    return {"role": "assistant", "content": text_blocks(text), **stamp}


def _call(item: dict[str, Any]) -> dict[str, Any]:
    call_id = str(item.get("call_id") or item.get("id") or "")
    if item.get("type") == "local_shell_call":
        action = item.get("action")
        return {"type": "toolCall", "id": call_id, "name": "local_shell", "arguments": action or {}}
    raw = item.get("arguments", item.get("input"))
    arguments: Any = raw
    if isinstance(raw, str):
        try:
            arguments = json.loads(raw)
        except ValueError:
            arguments = {"input": raw}
    if not isinstance(arguments, dict):
        arguments = {"input": arguments}
    return {
        "type": "toolCall",
        "id": call_id,
        "name": str(item.get("name") or "tool"),
        "arguments": arguments,
    }


def _output_text(output: Any) -> str:
    """A call's output: Codex writes a string, often JSON ``{"output": ..., "metadata": ...}``."""
    if isinstance(output, dict):
        return str(output.get("output") if "output" in output else json.dumps(output))
    if not isinstance(output, str):
        return "" if output is None else json.dumps(output)
    try:
        decoded = json.loads(output)
    except ValueError:
        return output
    if isinstance(decoded, dict) and isinstance(decoded.get("output"), str):
        return str(decoded["output"])
    return output
