"""Claude Code session files to host messages. Pure apart from reading the files.

Claude Code keeps one JSON Lines file per session under ``~/.claude/projects/<project>/
<sessionId>.jsonl``. Each conversation line is ``{"type": "user"|"assistant", "sessionId",
"uuid", "parentUuid", "timestamp": <ISO 8601>, "isSidechain", "message": {"role", "content"}}``
where ``content`` is a string or Anthropic content blocks (``text``, ``thinking``, ``tool_use``;
a user line carries ``tool_result`` blocks). Other lines (``summary``, ``system``, file history
snapshots) and meta prompts (``isMeta``) are bookkeeping. A streamed answer may span several
lines with the same ``message.id``, one content block each: they are one message.

Messages become the host shape the service stores (OpenClaw's AgentMessage): a ``tool_use``
block becomes a ``toolCall`` block, each ``tool_result`` block its own ``toolResult`` message
named after its call, and the time becomes the millisecond ``timestamp``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.imports.files import read_session_files
from app.imports.lines import Line, epoch_ms, json_lines, text_blocks, to_datetime
from app.imports.records import HostMessage, ReadResult, TranscriptSession


def read_claude_code(path: Path) -> ReadResult:
    """Every session file under ``path`` (a projects folder, a project folder or one file)."""
    return read_session_files(path, claude_code_sessions, "Claude Code session")


def claude_code_sessions(lines: Any, source: str, default_id: str) -> ReadResult:
    """The sessions of one file's lines (normally one; each line names its session)."""
    result = ReadResult()
    sessions: dict[str, TranscriptSession] = {}
    last_id: dict[str, str] = {}  # the message.id of each session's last assistant message
    parsed = list(json_lines(lines, source, result.problems))
    # Lines that name no session (summaries) belong to the file's session: the first one named.
    named = (str(v) for line in parsed if (v := line.value.get("sessionId")))
    file_session = next(named, default_id)
    for line in parsed:
        session_id = str(line.value.get("sessionId") or file_session)
        if session_id not in sessions:
            sessions[session_id] = TranscriptSession(session_id, source)
        _add_line(sessions[session_id], line, last_id)
    result.sessions.extend(sessions.values())
    return result


def _add_line(session: TranscriptSession, line: Line, last_id: dict[str, str]) -> None:
    value = line.value
    kind = value.get("type")
    message = value.get("message")
    if kind not in ("user", "assistant") or not isinstance(message, dict):
        session.skip(f"bookkeeping entry ({kind or 'no type'})")
    elif value.get("isSidechain") is True:
        session.skip("subagent (sidechain) message")
    elif value.get("isMeta") is True or value.get("isCompactSummary") is True:
        session.skip("host meta message")
    else:
        at = to_datetime(value.get("timestamp"))
        if kind == "assistant":
            _add_assistant(session, message, at, last_id)
        else:
            last_id.pop(session.session_id, None)
            _add_user(session, message, at)


def _add_assistant(
    session: TranscriptSession, message: dict[str, Any], at: Any, last_id: dict[str, str]
) -> None:
    blocks = [_assistant_block(b) for b in _blocks(message.get("content"))]
    kept = [b for b in blocks if b is not None]
    message_id = message.get("id")
    previous = session.messages[-1] if session.messages else None
    if (
        isinstance(message_id, str)
        and last_id.get(session.session_id) == message_id
        and previous is not None
    ):
        previous.message["content"].extend(kept)  # the same answer, streamed over several lines
        return
    if isinstance(message_id, str):
        last_id[session.session_id] = message_id
    out: dict[str, Any] = {"role": "assistant", "content": kept}
    if isinstance(message.get("model"), str):
        out["model"] = message["model"]
    if at is not None:
        out["timestamp"] = epoch_ms(at)
    session.messages.append(HostMessage(out, at))


def _assistant_block(block: Any) -> dict[str, Any] | None:
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return {"type": "text", "text": block["text"]}
    if kind == "thinking" and isinstance(block.get("thinking"), str):
        return {"type": "thinking", "thinking": block["thinking"]}
    if kind == "tool_use":
        return {
            "type": "toolCall",
            "id": str(block.get("id") or ""),
            "name": str(block.get("name") or "tool"),
            "arguments": block.get("input") if isinstance(block.get("input"), dict) else {},
        }
    return None


def _add_user(session: TranscriptSession, message: dict[str, Any], at: Any) -> None:
    content = message.get("content")
    stamp = {"timestamp": epoch_ms(at)} if at is not None else {}
    if isinstance(content, str):
        session.messages.append(HostMessage({"role": "user", "content": content, **stamp}, at))
        return
    texts: list[dict[str, Any]] = []
    for block in _blocks(content):
        if isinstance(block, dict) and block.get("type") == "tool_result":
            session.messages.append(HostMessage(_tool_result(session, block, stamp), at))
        elif isinstance(block, dict) and block.get("type") == "text":
            texts.append({"type": "text", "text": str(block.get("text") or "")})
    if texts:
        session.messages.append(HostMessage({"role": "user", "content": texts, **stamp}, at))


def _tool_result(
    session: TranscriptSession, block: dict[str, Any], stamp: dict[str, Any]
) -> dict[str, Any]:
    call_id = str(block.get("tool_use_id") or "")
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": _call_name(session, call_id),
        "content": _result_content(block.get("content")),
        "isError": block.get("is_error") is True,
        **stamp,
    }


def _call_name(session: TranscriptSession, call_id: str) -> str:
    for earlier in reversed(session.messages):
        for block in earlier.message.get("content") or []:
            if (
                isinstance(block, dict)
                and block.get("type") == "toolCall"
                and block.get("id") == call_id
            ):
                return str(block.get("name"))
    return "tool"


def _result_content(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return text_blocks(content)
    out = [
        {"type": "text", "text": str(b.get("text") or "")}
        for b in _blocks(content)
        if isinstance(b, dict) and b.get("type") == "text"
    ]
    return out or text_blocks("")


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return text_blocks(content)
    return content if isinstance(content, list) else []
