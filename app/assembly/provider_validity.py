"""Make an assembled history acceptable to model providers (docs/lifecycle.md, Assemble step 5).

The passes follow the reference's ``sanitizeAgentMessagesForProvider`` (docs/peers.md, OpenViking §5.3) with
the pairing repair of §5.11, in this order:

1. assistant string content becomes one text block;
2. tool calls and results are paired: after each assistant message with tool calls comes one
   result per call, in call order; a missing one is synthesized as an error result; orphan and
   duplicate results are dropped;
3. consecutive user messages are merged;
4. a ``(no content)`` user message goes between two consecutive assistant messages;
5. blank text blocks are removed where the content keeps at least one block.

Block types are not rewritten: stored messages are returned as the host sent them. The input list
and its messages are never mutated; a message that needs no change comes back as the same object.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.core.rules.messages import Message, ToolCallRef, role_of, tool_calls, tool_result_id

SYNTHETIC_RESULT_TEXT = (
    "[context-engine] missing tool result in session history; "
    "inserted synthetic error result for transcript repair."
)
NO_CONTENT_TEXT = "(no content)"
# docs/peers.md, OpenViking §5.11 step 4: such turns were cut short, their calls never ran to completion.
_UNFINISHED_STOP_REASONS = frozenset({"error", "aborted"})


@dataclass(slots=True)
class PairingStats:
    """What the pairing repair did, for diagnostics."""

    added: int = 0
    dropped_duplicates: int = 0
    dropped_orphans: int = 0
    moved: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.added or self.dropped_duplicates or self.dropped_orphans or self.moved)


def synthetic_tool_result(call: ToolCallRef) -> Message:
    """The error result that stands in for a tool call whose result is missing."""
    return {
        "role": "toolResult",
        "toolCallId": call.id,
        "toolName": call.name or "unknown",
        "content": [{"type": "text", "text": SYNTHETIC_RESULT_TEXT}],
        "isError": True,
    }


def _unique_calls(message: Message) -> list[ToolCallRef]:
    """Tool calls in block order, one per id (a repeated id is answered once)."""
    calls: dict[str, ToolCallRef] = {}
    for call in tool_calls(message):
        calls.setdefault(call.id, call)
    return list(calls.values())


def _next_assistant(messages: Sequence[Message], start: int) -> int:
    index = start
    while index < len(messages) and role_of(messages[index]) != "assistant":
        index += 1
    return index


def _split_span(
    span: Sequence[Message], call_ids: set[str], seen: set[str], stats: PairingStats
) -> tuple[dict[str, Message], list[Message], list[Message]]:
    """Split what follows an assistant into its results (by id), the rest, and the kept order."""
    results: dict[str, Message] = {}
    remainder: list[Message] = []
    kept_order: list[Message] = []
    for message in span:
        if role_of(message) != "toolResult":
            remainder.append(message)
            kept_order.append(message)
            continue
        result_id = tool_result_id(message)
        if result_id is not None and result_id in seen:
            stats.dropped_duplicates += 1
        elif result_id in call_ids:
            seen.add(result_id)
            results[result_id] = message
            kept_order.append(message)
        else:
            stats.dropped_orphans += 1
    return results, remainder, kept_order


def _count_moved(kept_order: list[Message], emitted: list[Message]) -> int:
    """Real results whose place among the kept messages of the span changed."""
    kept_ids = {id(message) for message in kept_order}
    real = [message for message in emitted if id(message) in kept_ids]  # synthetic ones left out
    return sum(
        1
        for before, after in zip(kept_order, real, strict=True)
        if after is not before and role_of(after) == "toolResult"
    )


def _unfinished(assistant: Message) -> bool:
    stop_reason = assistant.get("stopReason")
    return isinstance(stop_reason, str) and stop_reason in _UNFINISHED_STOP_REASONS


def _repair_span(
    assistant: Message, span: Sequence[Message], seen: set[str], stats: PairingStats
) -> list[Message]:
    """The assistant, its results in call order, then the other messages of its span."""
    calls = _unique_calls(assistant)
    results, remainder, kept_order = _split_span(span, {c.id for c in calls}, seen, stats)
    if _unfinished(assistant):
        # Nothing is synthesized for an unfinished turn, and its results go with it (§5.11).
        stats.dropped_orphans += len(results)
        return [assistant, *remainder]
    answers: list[Message] = []
    for call in calls:
        if call.id in results:
            answers.append(results[call.id])
        else:
            answers.append(synthetic_tool_result(call))
            stats.added += 1
    emitted = [*answers, *remainder]
    stats.moved += _count_moved(kept_order, emitted)
    return [assistant, *emitted]


def repair_tool_pairing(messages: Sequence[Message]) -> tuple[list[Message], PairingStats]:
    """Pair tool calls with their results (docs/peers.md, OpenViking §5.11), with what was changed."""
    stats = PairingStats()
    seen: set[str] = set()
    out: list[Message] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        role = role_of(message)
        if role != "assistant" or not tool_calls(message):
            if role == "toolResult":
                stats.dropped_orphans += 1  # no assistant call in reach answers to it
            else:
                out.append(message)
            index += 1
            continue
        end = _next_assistant(messages, index + 1)
        out.extend(_repair_span(message, messages[index + 1 : end], seen, stats))
        index = end
    return out, stats


def _normalize_assistant(message: Message) -> Message:
    content = message.get("content")
    if role_of(message) == "assistant" and isinstance(content, str):
        return {**message, "content": [{"type": "text", "text": content}]}
    return message


def _as_blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return list(content)
    return []


def _merge_users(run: list[Message]) -> Message:
    """One user message from consecutive ones; tool_result blocks go first (§5.3 step 4)."""
    if len(run) == 1:
        return run[0]
    blocks = [block for message in run for block in _as_blocks(message.get("content"))]
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    others = [b for b in blocks if not (isinstance(b, dict) and b.get("type") == "tool_result")]
    return {**run[0], "content": [*results, *others]}


def merge_consecutive_users(messages: Sequence[Message]) -> list[Message]:
    """Merge each run of consecutive user messages into the first of the run."""
    out: list[Message] = []
    run: list[Message] = []
    for message in messages:
        if role_of(message) == "user":
            run.append(message)
            continue
        if run:
            out.append(_merge_users(run))
            run = []
        out.append(message)
    if run:
        out.append(_merge_users(run))
    return out


def ensure_alternation(messages: Sequence[Message]) -> list[Message]:
    """Put a ``(no content)`` user message between two consecutive assistant messages."""
    out: list[Message] = []
    for message in messages:
        if out and role_of(message) == "assistant" and role_of(out[-1]) == "assistant":
            out.append({"role": "user", "content": NO_CONTENT_TEXT})
        out.append(message)
    return out


def _is_blank_text(block: Any) -> bool:
    if not (isinstance(block, dict) and block.get("type") == "text"):
        return False
    text = block.get("text")
    return not isinstance(text, str) or not text.strip()


def _drops_blank_text(message: Message) -> bool:
    """Whether the content holds blank text blocks beside others (a single block never does)."""
    content = message.get("content")
    if not isinstance(content, list) or len(content) < 2:
        return False
    blank = [_is_blank_text(block) for block in content]
    return any(blank) and not all(blank)


def drop_blank_text_blocks(message: Message) -> Message:
    """Remove blank text blocks, unless that would leave the content empty."""
    if not _drops_blank_text(message):
        return message
    return {**message, "content": [b for b in message["content"] if not _is_blank_text(b)]}


def _only_users_to_merge(messages: Sequence[Message]) -> bool | None:
    """What the passes would do to the history, found in one pass: nothing (False), merge runs of
    consecutive user messages and nothing else (True), or more (None).

    The history the service assembles nearly always needs nothing but the merge of its summary
    with the user message after it, and this costs a fraction of the five passes
    (bench/RESULTS.md).
    """
    seen: set[str] = set()
    pending: list[str] = []  # ids of the calls still to be answered, the next one last
    previous = ""
    users_to_merge = False
    for message in messages:
        role = role_of(message)
        if _drops_blank_text(message):
            return None
        if pending:  # the results follow their assistant, in call order, nothing in between
            if role != "toolResult" or tool_result_id(message) != pending[-1]:
                return None
            seen.add(pending.pop())
        elif role == "toolResult" or role == previous == "assistant":
            return None  # an orphan or duplicate result; two assistants to separate
        elif role == "assistant":
            if isinstance(message.get("content"), str):
                return None
            # An unfinished turn's calls are not answered: a result after it is dropped.
            ids = [] if _unfinished(message) else [call.id for call in _unique_calls(message)]
            if not seen.isdisjoint(ids):
                return None
            pending = ids[::-1]
        users_to_merge = users_to_merge or role == previous == "user"
        previous = role
    return None if pending else users_to_merge


def make_provider_valid(messages: Sequence[Message]) -> list[Message]:
    """A new list of the messages, made valid for providers (docs/lifecycle.md, Assemble step 5)."""
    verdict = _only_users_to_merge(messages)
    if verdict is False:
        return list(messages)
    if verdict:
        originals = {id(message) for message in messages}
        return [
            message if id(message) in originals else drop_blank_text_blocks(message)
            for message in merge_consecutive_users(messages)
        ]
    normalized = [_normalize_assistant(m) for m in messages]
    paired, _ = repair_tool_pairing(normalized)
    merged = merge_consecutive_users(paired)
    alternating = ensure_alternation(merged)
    return [drop_blank_text_blocks(m) for m in alternating]
