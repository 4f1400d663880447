"""Recall injection into the latest user message (docs/lifecycle.md, tool_loop phase)."""

from __future__ import annotations

import copy
from typing import Any

from app.assembly.injection import (
    MAX_QUERY_CHARS,
    latest_user_text,
    prepend_to_latest_user,
    recall_query,
)
from app.assembly.tool_loop import INLINE_QUERY_CHARS, query_of

BLOCK = "<openviking-context>\nmemo\n</openviking-context>"


def test_string_content_prefixed() -> None:
    earlier = {"role": "assistant", "content": [{"type": "text", "text": "a"}]}
    latest = {"role": "user", "content": "question", "timestamp": 9}
    messages = [earlier, latest]
    out = prepend_to_latest_user(messages, BLOCK)
    assert out[0] is earlier
    assert out[1] == {"role": "user", "content": BLOCK + "\n\nquestion", "timestamp": 9}
    assert latest["content"] == "question"
    assert out is not messages and len(messages) == 2


def test_first_text_block_prefixed() -> None:
    image = {"type": "image", "data": "AA", "mimeType": "image/png"}
    first = {"type": "text", "text": "look", "cache": 1}
    latest = {"role": "user", "content": [first, image]}
    original = copy.deepcopy(latest)
    out = prepend_to_latest_user([latest], BLOCK)
    assert out[0]["content"] == [{"type": "text", "text": BLOCK + "\n\nlook", "cache": 1}, image]
    assert out[0]["content"][1] is image
    assert latest == original


def test_text_block_inserted_when_first_block_is_not_text() -> None:
    image = {"type": "image", "data": "AA", "mimeType": "image/png"}
    text = {"type": "text", "text": "what is this"}
    latest = {"role": "user", "content": [image, text]}
    out = prepend_to_latest_user([latest], BLOCK)
    assert out[0]["content"] == [{"type": "text", "text": BLOCK}, image, text]
    assert latest["content"] == [image, text]


def test_text_block_inserted_into_empty_or_missing_content() -> None:
    out = prepend_to_latest_user([{"role": "user", "content": []}], BLOCK)
    assert out[0]["content"] == [{"type": "text", "text": BLOCK}]
    out = prepend_to_latest_user([{"role": "user"}], BLOCK)
    assert out[0]["content"] == [{"type": "text", "text": BLOCK}]


def test_non_user_tail_returned_unchanged() -> None:
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": []}]
    out = prepend_to_latest_user(messages, BLOCK)
    assert out == messages and out is not messages
    assert out[0] is messages[0] and out[1] is messages[1]
    assert prepend_to_latest_user([], BLOCK) == []


def test_latest_user_text_joins_text_blocks() -> None:
    messages = [
        {"role": "user", "content": "old"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "one"},
                {"type": "image", "data": "AA"},
                {"type": "text", "text": "two"},
            ],
        },
        {"role": "toolResult", "toolCallId": "c", "content": "not user"},
    ]
    assert latest_user_text(messages) == "one\ntwo"


def test_latest_user_text_without_user() -> None:
    assert latest_user_text([]) == ""
    assert latest_user_text([{"role": "assistant", "content": "x"}]) == ""
    assert latest_user_text([{"role": "user", "content": None}]) == ""


def latest_user_query(messages: list[Any], max_chars: int = MAX_QUERY_CHARS) -> str:
    """The recall query of the latest user message, as tool-loop recall computes it."""
    return recall_query(latest_user_text(messages), max_chars)


def test_query_is_sanitized_and_collapsed() -> None:
    text = (
        "<openviking-context>old</openviking-context>\n[2026-03-29T10:00:00Z]  how do I\n\ndeploy?"
    )
    messages = [{"role": "user", "content": [{"type": "text", "text": text}]}]
    assert latest_user_query(messages) == "how do I deploy?"


def test_query_joins_blocks_with_newline_then_collapses() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    ]
    assert latest_user_query(messages) == "a b"


def test_query_truncated_to_4000_chars() -> None:
    messages = [{"role": "user", "content": "x" * 5000}]
    assert MAX_QUERY_CHARS == 4000
    assert latest_user_query(messages) == "x" * 4000
    assert latest_user_query(messages, max_chars=10) == "x" * 10


def test_query_truncation_counts_sanitized_text() -> None:
    meta = "<relevant-memories>" + "m" * 5000 + "</relevant-memories>"
    messages = [{"role": "user", "content": meta + "short question"}]
    assert latest_user_query(messages) == "short question"


def test_query_empty_without_user() -> None:
    assert latest_user_query([{"role": "assistant", "content": "x"}]) == ""


async def test_a_query_is_the_same_inline_or_in_a_thread() -> None:
    """Short texts are handled on the event loop, longer ones in a thread: the same query."""
    meta = "<relevant-memories>m</relevant-memories>"
    for size in (0, 10, INLINE_QUERY_CHARS - len(meta), INLINE_QUERY_CHARS + 1, 20_000):
        text = meta + ("password=hunter2 deploy  it\n" * (size // 27 + 1))[:size]
        assert await query_of(text) == recall_query(text), size
