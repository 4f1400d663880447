"""Capture sanitation: every rule of docs/peers.md, OpenViking §5.7 and the message-level behaviour."""

from __future__ import annotations

import copy
import random
import string

import pytest
import regex

from app.core.rules.sanitize import (
    _ANY_RULE_RE,
    contains_injected_context,
    may_need_rules,
    sanitize_message_for_capture,
    sanitize_text,
)


def store(text: str) -> str:
    return sanitize_text(text, collapse_whitespace=False)


def query(text: str) -> str:
    return sanitize_text(text, collapse_whitespace=True)


# Rule 1: legacy tool placeholder.


@pytest.mark.parametrize(
    "text", ["[tool: bash]", "  [toolUse: read_file]  ", "[TOOL:grep]", "\n[tooluse:x y]\n"]
)
def test_whole_text_tool_placeholder_becomes_empty(text: str) -> None:
    assert store(text) == ""
    assert query(text) == ""


def test_tool_placeholder_inside_other_text_is_kept() -> None:
    assert store("see [tool: bash] output") == "see [tool: bash] output"


def test_tool_placeholder_needs_a_name() -> None:
    assert store("[tool: ]x") == "[tool: ]x"
    assert store("[toolbox: a]") == "[toolbox: a]"


# Rule 2: compacted system message.


def test_compacted_system_message_returns_collapsed_payload() -> None:
    text = "System: [2026-03-29 10:00] Compacted   history   of  the chat  "
    assert store(text) == "history of the chat"
    assert query(text) == "history of the chat"


def test_compacted_system_message_is_case_insensitive_and_returns_early() -> None:
    # The early return means later rules (here the NUL removal) do not run.
    assert store("system: [x] compacted a\x00b") == "a\x00b"


def test_compacted_rule_does_not_span_lines() -> None:
    text = "System: [x] Compacted first\nsecond"
    assert store(text) == text


# Rule 3.1: injected recall envelope.


def test_openviking_context_block_removed() -> None:
    text = 'Before <openviking-context source="x">\nmemory 1\nmemory 2\n</openviking-context> after'
    assert query(text) == "Before after"
    assert store(text) == "Before   after"


def test_openviking_context_blocks_removed_non_greedy_and_case_insensitive() -> None:
    text = (
        "<OpenViking-Context>a</OpenViking-Context>keep<openviking-context>b</openviking-context>"
    )
    assert store(text) == "keep"


def test_openviking_context_tag_needs_word_boundary() -> None:
    text = "<openviking-contextual>a</openviking-context> x"
    assert store(text) == text


# Rule 3.2: relevant memories.


def test_relevant_memories_block_removed() -> None:
    text = "<relevant-memories>\n- likes tea\n</relevant-memories>\nWhat should I drink?"
    assert store(text) == "What should I drink?"


def test_relevant_memories_only_leaves_nothing() -> None:
    assert store("<relevant-memories>x</relevant-memories>") == ""


# Rule 3.3: conversation metadata blocks.


@pytest.mark.parametrize(
    "label",
    [
        "Conversation info",
        "Conversation metadata",
        "conversation INFO",
        "会话信息",
        "对话信息",
        "Conversation info (untrusted metadata)",
        "会话信息 (不可信)",
    ],
)
def test_conversation_metadata_block_removed(label: str) -> None:
    text = f'{label}:\n```json\n{{"channel": "x"}}\n```\nHello there'
    assert store(text) == "Hello there"


def test_conversation_metadata_block_after_a_newline_removed() -> None:
    text = 'Hi\nConversation info:\n```\n{"a": 1}\n```\nbye'
    assert store(text) == "Hi \nbye"
    assert query(text) == "Hi bye"


def test_conversation_metadata_label_mid_line_is_kept() -> None:
    text = 'See Conversation info: ```{"a": 1}``` here'
    assert store(text) == text


# Rule 3.4: sender metadata.


def test_sender_metadata_block_removed() -> None:
    text = 'Sender (untrusted metadata):\n```json\n{"name": "Ann"}\n```\nPlease help'
    assert store(text) == "Please help"


def test_sender_metadata_with_empty_parentheses_removed() -> None:
    assert query("x Sender ():```a``` y") == "x y"


# Rule 3.5: fenced JSON with metadata keys.


def test_fenced_json_with_three_metadata_keys_removed() -> None:
    text = 'Hi\n```json\n{"sessionKey": "a", "Channel": "b", "timestamp": 1}\n```\nthere'
    assert query(text) == "Hi there"


def test_fenced_json_with_two_metadata_keys_kept() -> None:
    text = 'Hi\n```json\n{"sessionKey": "a", "channel": "b", "other": 1}\n```\nthere'
    assert store(text) == text


def test_fenced_json_repeated_key_counts_once() -> None:
    text = '```json\n[{"sender": 1}, {"sender": 2}, {"SENDER": 3}]\n```'
    assert store(text) == text


def test_fenced_json_only_metadata_blocks_go() -> None:
    meta = '```json\n{"userid": 1, "agentid": 2, "timezone": "UTC"}\n```'
    data = '```json\n{"price": 3}\n```'
    assert store(f"{meta} and {data}") == f"and {data}"


# Rule 3.6: leading timestamp prefix.


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[2026-03-29T10:00:00Z] hello", "hello"),
        ("[Fri 2026-04-10 17:20 GMT+8] hello", "hello"),
        ("[2026/03/29] hello", "hello"),
        ("[29-03-26 10:00] hello", "hello"),
        ("[2026-03-29 10:00:00.123+02:00] hello", "hello"),
        ("[Friday 2026-04-10 17:20 UTC] hello", "hello"),
        ("  [2026-03-29]   hello", "hello"),
    ],
)
def test_leading_timestamp_prefix_removed(text: str, expected: str) -> None:
    assert store(text) == expected


def test_double_bracket_is_not_a_timestamp() -> None:
    assert store("[[2026-03-29]] wiki link") == "[[2026-03-29]] wiki link"


def test_timestamp_only_removed_at_the_start() -> None:
    assert store("hello [2026-03-29T10:00:00Z] world") == "hello [2026-03-29T10:00:00Z] world"


def test_only_the_first_timestamp_prefix_removed() -> None:
    assert store("[2026-03-29] [2026-03-30] hi") == "[2026-03-30] hi"


def test_timestamp_exposed_by_removed_memories_is_removed() -> None:
    text = "<relevant-memories>m</relevant-memories>\n[2026-03-29T10:00:00Z] question"
    assert store(text) == "question"


def test_bracketed_non_timestamp_kept() -> None:
    assert store("[note] hello") == "[note] hello"


# Rule 3.7: leading subagent marker.


def test_leading_subagent_context_marker_removed() -> None:
    assert store("[Subagent Context] You are a helper.") == "You are a helper."
    assert store("  [subagent context]\ntask") == "task"


def test_subagent_marker_elsewhere_kept() -> None:
    assert store("see [Subagent Context] here") == "see [Subagent Context] here"


def test_timestamp_then_subagent_marker_both_removed() -> None:
    assert store("[2026-03-29] [Subagent Context] do it") == "do it"


# Rule 3.8: NUL characters.


def test_nul_characters_removed() -> None:
    assert store("a\x00b\x00") == "ab"
    assert query("a\x00 \x00b") == "a b"


# Rule 3.9 and the storage decision: whitespace.


def test_collapse_whitespace_joins_runs_and_trims() -> None:
    assert query("  one\n\n two\t three  ") == "one two three"


def test_storage_keeps_internal_whitespace_and_strips_ends() -> None:
    assert store("  line one\n\n    indented\tcode  \n") == "line one\n\n    indented\tcode"


def test_plain_text_unchanged() -> None:
    assert store("just text") == "just text"
    assert query("just text") == "just text"


# Injection marker detection.


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<openviking-context>x</openviking-context>", True),
        ("prefix <openviking-context a=1>", True),
        ("Source: openviking-auto-recall\nstuff", True),
        ("nothing here", False),
        ("<relevant-memories>x</relevant-memories>", False),
    ],
)
def test_contains_injected_context(text: str, expected: bool) -> None:
    assert contains_injected_context(text) is expected


# Message-level sanitation.


def test_user_string_content_sanitized_into_new_dict() -> None:
    message = {"role": "user", "content": "[2026-03-29T10:00:00Z] hi", "timestamp": 5}
    original = copy.deepcopy(message)
    result = sanitize_message_for_capture(message)
    assert result == {"role": "user", "content": "hi", "timestamp": 5}
    assert result is not message
    assert message == original


def test_unchanged_message_returned_as_is() -> None:
    message = {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 5}
    assert sanitize_message_for_capture(message) is message


def test_text_block_emptied_is_dropped_other_blocks_verbatim() -> None:
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "<relevant-memories>m</relevant-memories>"},
            image,
            {"type": "text", "text": "[2026-03-29] look", "extra": 1},
        ],
    }
    original = copy.deepcopy(message)
    result = sanitize_message_for_capture(message)
    assert result == {
        "role": "user",
        "content": [image, {"type": "text", "text": "look", "extra": 1}],
    }
    assert result["content"][0] is image
    assert message == original


def test_message_left_with_nothing_is_none() -> None:
    assert sanitize_message_for_capture({"role": "user", "content": "[tool: bash]"}) is None
    blocks = [{"type": "text", "text": "<relevant-memories>x</relevant-memories>"}]
    assert sanitize_message_for_capture({"role": "user", "content": blocks}) is None
    assert sanitize_message_for_capture({"role": "assistant", "content": "   "}) is None
    assert sanitize_message_for_capture({"role": "assistant", "content": []}) is None


def test_assistant_tool_calls_thinking_and_unknown_fields_verbatim() -> None:
    thinking = {"type": "thinking", "thinking": "[2026-03-29] hmm", "thinkingSignature": "s=="}
    call = {
        "type": "toolCall",
        "id": "c1",
        "name": "bash",
        "arguments": {"cmd": "<relevant-memories>x</relevant-memories>"},
        "thoughtSignature": "t",
    }
    message = {
        "role": "assistant",
        "content": [thinking, {"type": "text", "text": "[tool: bash]"}, call],
        "usage": {"input": 1},
        "stopReason": "toolUse",
        "custom": {"nested": [1, 2]},
    }
    result = sanitize_message_for_capture(message)
    assert result is not None
    assert result["content"] == [thinking, call]
    assert result["content"][0] is thinking and result["content"][1] is call
    assert {k: v for k, v in result.items() if k != "content"} == {
        "role": "assistant",
        "usage": {"input": 1},
        "stopReason": "toolUse",
        "custom": {"nested": [1, 2]},
    }


def test_assistant_with_only_tool_call_kept() -> None:
    message = {"role": "assistant", "content": [{"type": "toolCall", "id": "c", "name": "x"}]}
    assert sanitize_message_for_capture(message) is message


def test_tool_result_untouched() -> None:
    message = {
        "role": "toolResult",
        "toolCallId": "c1",
        "content": [{"type": "text", "text": "<relevant-memories>x</relevant-memories>"}],
    }
    assert sanitize_message_for_capture(message) is message


def test_system_and_other_roles_untouched() -> None:
    system = {"role": "system", "content": "[2026-03-29] x"}
    summary = {"role": "compactionSummary", "summary": "[tool: x]"}
    assert sanitize_message_for_capture(system) is system
    assert sanitize_message_for_capture(summary) is summary


def test_non_text_content_shapes_untouched() -> None:
    no_content = {"role": "user"}
    odd = {"role": "user", "content": {"type": "text", "text": "[tool: x]"}}
    assert sanitize_message_for_capture(no_content) is no_content
    assert sanitize_message_for_capture(odd) is odd


def test_text_block_with_non_string_text_and_bare_strings_kept() -> None:
    message = {"role": "user", "content": [{"type": "text", "text": None}, "[tool: x]"]}
    assert sanitize_message_for_capture(message) is message


def test_message_sanitation_keeps_internal_newlines() -> None:
    message = {"role": "assistant", "content": [{"type": "text", "text": "a\n\n  b\n"}]}
    result = sanitize_message_for_capture(message)
    assert result == {"role": "assistant", "content": [{"type": "text", "text": "a\n\n  b"}]}


# The ASCII prefilter in front of the rules' scan: it may say yes too often, never no too often.
_RULE_PIECES = [
    "[",
    "System:",
    "<openviking-context",
    "<relevant-memories",
    "conversation info",
    "conversation metadata",
    "sender (",
    "sender(",
    "sender\t\n(",
    "sender\x0b\x0c(",
    "```json",
    "\x00",
    "Sender",
    "conversation",
    "json",
]
_WHITESPACE = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"


def _random_case(text: str, rng: random.Random) -> str:
    return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in text)


def _random_ascii_text(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randrange(1, 6)):
        kind = rng.random()
        if kind < 0.4:
            parts.append(_random_case(rng.choice(_RULE_PIECES), rng))
        elif kind < 0.6:
            parts.append("".join(rng.choice(_WHITESPACE) for _ in range(rng.randrange(1, 4))))
        else:
            parts.append("".join(rng.choice(string.printable) for _ in range(rng.randrange(12))))
    return "".join(parts)


# The alternatives of _ANY_RULE_RE that an ASCII text can match, each on its own.
_ASCII_ALTERNATIVES = [
    regex.compile(pattern, regex.IGNORECASE)
    for pattern in (
        r"\A\s*\[",
        r"\ASystem:",
        r"<openviking-context",
        r"<relevant-memories",
        r"conversation (?:info|metadata)",
        r"sender\s*\(",
        r"```json",
        r"\x00",
    )
]


def test_the_ascii_prefilter_never_hides_a_text_the_rules_match() -> None:
    rng = random.Random(20261127)
    reached = [0] * len(_ASCII_ALTERNATIVES)
    for _ in range(50_000):
        text = _random_ascii_text(rng)
        if _ANY_RULE_RE.search(text):
            assert may_need_rules(text), repr(text)
        for index, alternative in enumerate(_ASCII_ALTERNATIVES):
            reached[index] += alternative.search(text) is not None
    assert min(reached) >= 100, reached  # the generator reaches every alternative often


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("We adopted a beagle from the shelter.", False),
        ("  [2026-03-29T10:00:00Z] hello", True),
        ("sYsTeM: [x] Compacted y", True),
        ("Sender (me): ```json", True),
        ("a message with \x00 inside", True),
        ("The sender of the parcel", True),  # a false alarm: the rules' scan decides
        ("用户的猫叫味噌。", True),  # not ASCII: always scanned
    ],
)
def test_the_ascii_prefilter_on_examples(text: str, expected: bool) -> None:
    assert may_need_rules(text) is expected


def test_a_text_without_marks_is_stored_as_it_was_before_the_prefilter() -> None:
    text = "  Plain words, spaces   kept inside.\n Second line.  "
    assert store(text) == text.strip()
    assert query(text) == "Plain words, spaces kept inside. Second line."
