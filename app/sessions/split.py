"""Where Phase 1 may cut the live messages (docs/lifecycle.md, Phase 1 step 3).

The cut must never separate an assistant message holding tool calls from the tool results that
answer it: the cut moves earlier until the whole exchange stays on one side.
"""

from __future__ import annotations

from app.core.rules.messages import Message, tool_calls, tool_result_id


def safe_split_index(messages: list[Message], split: int) -> int:
    """The largest index <= ``split`` that keeps every tool exchange on one side of the cut."""
    split = max(0, min(split, len(messages)))
    call_owner: dict[str, int] = {}
    for index, message in enumerate(messages):
        for call in tool_calls(message):
            call_owner.setdefault(call.id, index)
    result_positions: dict[str, list[int]] = {}
    for index, message in enumerate(messages):
        result_id = tool_result_id(message)
        if result_id is not None:
            result_positions.setdefault(result_id, []).append(index)
    while split > 0:
        earliest = split
        for call_id, owner in call_owner.items():
            if owner >= split:
                continue
            # An archived call whose result stays live pulls the cut back to the call.
            if any(pos >= split for pos in result_positions.get(call_id, ())):
                earliest = min(earliest, owner)
        if earliest == split:
            return split
        split = earliest
    return 0
