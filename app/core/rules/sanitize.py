"""Capture sanitation of user and assistant text (docs/lifecycle.md, Capture step 3).

The rules are those of the reference's ``sanitizeUserTextForCapture`` (docs/peers.md, OpenViking §5.7), applied
in the same order: a legacy tool placeholder becomes empty; a compacted system message becomes its
payload; injected recall envelopes, ``<relevant-memories>`` blocks, conversation and sender metadata
blocks, metadata-only fenced JSON, the leading timestamp prefix and the leading
``[Subagent Context]`` marker are removed; NUL characters are removed.

Decision on whitespace: stored messages are kept as close to lossless as possible, so with
``collapse_whitespace=False`` (the storage path) only the removal rules apply and the result is
stripped at both ends; newlines and runs of spaces inside the text are preserved. With
``collapse_whitespace=True`` (the recall-query path) the reference's last rule applies exactly:
every whitespace run becomes one space, then the text is trimmed. The compacted-system-message
rule returns its collapsed payload in both modes, as the reference does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import regex

from app.core.rules.messages import Message, role_of

# Rule 1: the whole text is a legacy tool placeholder such as "[tool: bash]" or "[toolUse: x]".
_TOOL_PLACEHOLDER_RE = regex.compile(r"\A\s*\[tool(?::\s*|Use:\s*)[^\]]+\]\s*\Z", regex.IGNORECASE)

# Rule 2: "System: [...] Compacted <payload>"; the reference's "." stops at line terminators and
# its "$" is the end of the input. Matched in two steps (see _compacted_payload): written as one
# pattern, every "] Compacted" of a long first line rescans the rest of that line.
_NOT_EOL = r"[^\n\r\u2028\u2029]"
_EOL_RE = regex.compile(r"[\n\r\u2028\u2029]")
_COMPACTED_HEAD_RE = regex.compile(r"\ASystem:\s*\[", regex.IGNORECASE)
_COMPACTED_MARK_RE = regex.compile(r"\]\s*Compacted\s*", regex.IGNORECASE)

# The rules run on the ``regex`` engine with ``concurrent=True``: a long scan leaves the GIL to
# other threads (the event loop, other requests), where ``re`` would hold it for the whole call.
# Rules 3.x remove delimited blocks. Each is an opening pattern (bounded: a long run without the
# expected end is scanned once, not once per start position) and the closing text searched from
# it; once a closing is missing no later opening can have one, so the scan stops (linear time).
_OPENVIKING_CONTEXT_OPEN_RE = regex.compile(r"<openviking-context\b[^>]{0,256}>", regex.IGNORECASE)
_OPENVIKING_CONTEXT_CLOSE_RE = regex.compile(r"</openviking-context>", regex.IGNORECASE)
_RELEVANT_MEMORIES_OPEN_RE = regex.compile(r"<relevant-memories>", regex.IGNORECASE)
_RELEVANT_MEMORIES_CLOSE_RE = regex.compile(r"</relevant-memories>", regex.IGNORECASE)
_CONVERSATION_METADATA_OPEN_RE = regex.compile(
    r"(?:\A|\n)[ \t\r\f\v]{0,64}(?:Conversation info|Conversation metadata|会话信息|对话信息)\s{0,16}"
    r"(?:\([^)]{1,256}\))?\s{0,16}:\s{0,16}```",
    regex.IGNORECASE,
)
_SENDER_METADATA_OPEN_RE = regex.compile(
    r"Sender\s{0,16}\([^)]{0,256}\)\s{0,16}:\s{0,16}```", regex.IGNORECASE
)
_FENCED_JSON_OPEN_RE = regex.compile(r"```json", regex.IGNORECASE)
_FENCE_CLOSE_RE = regex.compile(r"```")
_METADATA_KEY_RE = regex.compile(
    r'"(session|sessionid|sessionkey|conversationid|channel|sender|userid|agentid|timestamp'
    r'|timezone)"\s*:',
    regex.IGNORECASE,
)
_MIN_METADATA_KEYS = 3

# Rule 6: examples "[2026-03-29T10:00:00Z] " and "[Fri 2026-04-10 17:20 GMT+8] "; "[[" is a link.
_TIMESTAMP_PREFIX_RE = regex.compile(
    r"\A\s*(?!\[\[)\[(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*\s+)?"
    r"(?:[0-9]{4}[-/][0-9]{2}[-/][0-9]{2}|[0-9]{2}[-/][0-9]{2}[-/][0-9]{2,4})"
    r"(?:[T\s][0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?(?:\.[0-9]+)?(?:Z|[+-][0-9]{1,2}(?::[0-9]{2})?)?"
    r"(?:\s*[A-Z]{1,5}(?:[+-][0-9]{1,2})?)?)?\s*\]\s*",
    regex.IGNORECASE,
)
_SUBAGENT_CONTEXT_RE = regex.compile(r"\A\s*\[Subagent Context\]", regex.IGNORECASE)
_WHITESPACE_RE = regex.compile(r"\s+")

_INJECTION_MARKERS = ("<openviking-context", "Source: openviking-auto-recall")
# One cheap scan that every rule below needs to match first; most texts carry none of these, and
# then the nine rules need not run (capture and assemble sanitize every message they see).
_ANY_RULE_RE = regex.compile(
    r"\A\s*\[|\ASystem:|<openviking-context|<relevant-memories|conversation (?:info|metadata)"
    r"|会话信息|对话信息|sender\s*\(|```json|\x00",
    regex.IGNORECASE,
)


def _collapse(text: str) -> str:
    return _WHITESPACE_RE.sub(" ", text, concurrent=True).strip()


def _remove_blocks(
    text: str,
    opening: regex.Pattern[str],
    closing: regex.Pattern[str],
    replace: Callable[[str], str] = lambda _inner: " ",
) -> str:
    """Replace every block from an ``opening`` match to the next ``closing`` match by
    ``replace(inner text)``, left to right, in linear time."""
    pieces: list[str] = []
    position = 0
    while (start := opening.search(text, position, concurrent=True)) is not None:
        end = closing.search(text, start.end(), concurrent=True)
        if end is None:
            break
        pieces += [text[position : start.start()], replace(text[start.end() : end.start()])]
        position = end.end()
    if not pieces:
        return text
    pieces.append(text[position:])
    return "".join(pieces)


def _metadata_json(inner: str) -> str:
    # Only a fenced JSON block that is clearly host metadata goes; other JSON is user content.
    keys = {key.lower() for key in _METADATA_KEY_RE.findall(inner, concurrent=True)}
    return " " if len(keys) >= _MIN_METADATA_KEYS else f"```json{inner}```"


def _compacted_payload(text: str) -> str | None:
    """Rule 2: the payload of ``System: [<one line>] Compacted <payload>``, or None.

    The bracket holds no line terminator and the payload runs to the end of the input without
    one; the first "] Compacted" mark after which both hold wins, as in the reference's lazy
    pattern. Each mark is looked at once: linear time.
    """
    head = _COMPACTED_HEAD_RE.match(text)
    if head is None:
        return None
    first_eol = _EOL_RE.search(text, head.end(), concurrent=True)
    bracket_limit = first_eol.start() if first_eol is not None else len(text)
    last_eol = max(text.rfind(c) for c in "\n\r\u2028\u2029")
    for mark in _COMPACTED_MARK_RE.finditer(text, head.end(), concurrent=True):
        if mark.start() >= bracket_limit:
            return None
        if mark.end() > last_eol and mark.end() < len(text):
            return text[mark.end() :]
    return None


# What an ASCII text must hold, lowered, for ``_ANY_RULE_RE`` to match it outside its anchored
# alternatives ("sender" stands for "sender", any whitespace, "(").
_ASCII_RULE_MARKS = (
    "<openviking-context",
    "<relevant-memories",
    "conversation info",
    "conversation metadata",
    "sender",
    "```json",
    "\x00",
)


def may_need_rules(text: str) -> bool:
    """False only when ``_ANY_RULE_RE`` cannot match: for an ASCII text, a few substring tests on
    its lowered copy, about an eighth of the case-insensitive scan's cost (which was most of what
    sanitizing an ordinary message cost). ASCII case-insensitivity is exact for ASCII text, and
    ``lstrip`` strips every character that ``\\s`` matches."""
    if not text.isascii():
        return True
    if text.lstrip()[:1] == "[" or text[:7].lower() == "system:":
        return True
    lowered = text.lower()
    return any(mark in lowered for mark in _ASCII_RULE_MARKS)


def sanitize_text(text: str, *, collapse_whitespace: bool) -> str:
    """Apply the capture sanitation rules of docs/peers.md, OpenViking §5.7 to one text."""
    if not (may_need_rules(text) and _ANY_RULE_RE.search(text, concurrent=True)):
        return _collapse(text) if collapse_whitespace else text.strip()
    if _TOOL_PLACEHOLDER_RE.match(text, concurrent=True):
        return ""
    compacted = _compacted_payload(text)
    if compacted is not None:
        return _collapse(compacted)
    text = _remove_blocks(text, _OPENVIKING_CONTEXT_OPEN_RE, _OPENVIKING_CONTEXT_CLOSE_RE)
    text = _remove_blocks(text, _RELEVANT_MEMORIES_OPEN_RE, _RELEVANT_MEMORIES_CLOSE_RE)
    text = _remove_blocks(text, _CONVERSATION_METADATA_OPEN_RE, _FENCE_CLOSE_RE)
    text = _remove_blocks(text, _SENDER_METADATA_OPEN_RE, _FENCE_CLOSE_RE)
    text = _remove_blocks(text, _FENCED_JSON_OPEN_RE, _FENCE_CLOSE_RE, _metadata_json)
    text = _TIMESTAMP_PREFIX_RE.sub("", text, count=1)
    text = _SUBAGENT_CONTEXT_RE.sub("", text, count=1)
    text = text.replace("\x00", "")
    return _collapse(text) if collapse_whitespace else text.strip()


def contains_injected_context(text: str) -> bool:
    """Whether a text already carries a recall envelope (docs/lifecycle.md, tool_loop step 2)."""
    return any(marker in text for marker in _INJECTION_MARKERS)


def _is_text_block(block: Any) -> bool:
    return (
        isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    )


def _sanitize_blocks(blocks: list[Any]) -> list[Any]:
    """Sanitize text blocks, drop those left empty; every other block is kept as it is."""
    out: list[Any] = []
    for block in blocks:
        if not _is_text_block(block):
            out.append(block)
            continue
        cleaned = sanitize_text(block["text"], collapse_whitespace=False)
        if not cleaned:
            continue
        out.append(block if cleaned == block["text"] else {**block, "text": cleaned})
    return out


def is_conversation_message(message: Any) -> bool:
    """Whether a host message belongs to the conversation the model sees.

    System messages are the host's; host bookkeeping entries (role ``custom``, or flagged
    ``excludeFromContext``, such as the 2026.9 host's nested-tool records inside a turn) are never
    shown to the model, so they are neither stored nor returned.
    """
    if not isinstance(message, dict) or message.get("excludeFromContext") is True:
        return False
    return role_of(message) not in ("", "system", "custom")


def sanitize_message_for_capture(message: Message) -> Message | None:
    """Sanitize a user or assistant message for storage; None when nothing is left of it.

    Other roles, and content that is neither a string nor a list, come back as the same object.
    When sanitation changes nothing, the same object is returned; otherwise a new dict whose other
    fields are the original values (docs/lifecycle.md, Capture step 3).
    """
    if role_of(message) not in ("user", "assistant"):
        return message
    content = message.get("content")
    if isinstance(content, str):
        cleaned = sanitize_text(content, collapse_whitespace=False)
        if not cleaned:
            return None
        return message if cleaned == content else {**message, "content": cleaned}
    if isinstance(content, list):
        blocks = _sanitize_blocks(content)
        if not blocks:
            return None
        unchanged = len(blocks) == len(content) and all(
            a is b for a, b in zip(blocks, content, strict=True)
        )
        return message if unchanged else {**message, "content": blocks}
    return message
