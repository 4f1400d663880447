"""Provider validity of assembled history (docs/lifecycle.md, Assemble step 5; docs/peers.md, OpenViking §5.3, §5.11)."""

from __future__ import annotations

import copy
from collections import Counter

from app.assembly.provider_validity import (
    NO_CONTENT_TEXT,
    SYNTHETIC_RESULT_TEXT,
    drop_blank_text_blocks,
    ensure_alternation,
    make_provider_valid,
    merge_consecutive_users,
    repair_tool_pairing,
)


def user(text: str = "u", **extra: object) -> dict:
    return {"role": "user", "content": text, **extra}


def assistant(*call_ids: str, text: str = "a", **extra: object) -> dict:
    blocks: list[dict] = [{"type": "text", "text": text}]
    blocks += [
        {"type": "toolCall", "id": c, "name": f"tool_{c}", "arguments": {}} for c in call_ids
    ]
    return {"role": "assistant", "content": blocks, **extra}


def result(call_id: str, text: str = "r") -> dict:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "content": [{"type": "text", "text": text}],
    }


def synthetic(call_id: str, name: str) -> dict:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": SYNTHETIC_RESULT_TEXT}],
        "isError": True,
    }


def assert_same_objects(out: list, expected: list) -> None:
    assert len(out) == len(expected)
    for got, want in zip(out, expected, strict=True):
        assert got is want


# Whole pipeline.


def test_valid_history_comes_back_as_the_same_objects() -> None:
    messages = [user(), assistant("c1"), result("c1"), assistant(), user("next")]
    out = make_provider_valid(messages)
    assert out is not messages
    assert_same_objects(out, messages)


def test_empty_history() -> None:
    assert make_provider_valid([]) == []


def test_inputs_never_mutated() -> None:
    messages = [
        user("x"),
        user([{"type": "text", "text": " "}, {"type": "text", "text": "y"}]),
        {"role": "assistant", "content": "plain"},
        assistant("c1", "c2"),
        user("between"),
        result("c2"),
        result("zz"),
        assistant(),
    ]
    original = copy.deepcopy(messages)
    make_provider_valid(messages)
    assert messages == original


def test_assistant_string_content_becomes_text_block() -> None:
    message = {"role": "assistant", "content": "hello", "model": "m"}
    out = make_provider_valid([user(), message])
    assert out[1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "hello"}],
        "model": "m",
    }
    assert message["content"] == "hello"


def test_user_string_content_stays_a_string() -> None:
    message = user("hello")
    assert make_provider_valid([message])[0] is message


def test_full_repair_example() -> None:
    a1 = assistant("c1", "c2")
    u_between = user("between")
    r2, r1 = result("c2"), result("c1")
    messages = [user("start"), a1, u_between, r2, r1, result("orphan"), assistant(), assistant()]
    out = make_provider_valid(messages)
    assert out[0] is messages[0]
    assert out[1] is a1
    assert out[2] is r1 and out[3] is r2
    assert out[4] is u_between
    assert out[5]["role"] == "assistant"
    assert out[6] == {"role": "user", "content": NO_CONTENT_TEXT}
    assert out[7]["role"] == "assistant"
    assert len(out) == 8


# Pairing.


def test_missing_result_gets_synthetic_error_result() -> None:
    a1 = assistant("c1", "c2")
    r1 = result("c1")
    out, stats = repair_tool_pairing([a1, r1, user()])
    assert out[0] is a1 and out[1] is r1
    assert out[2] == synthetic("c2", "tool_c2")
    assert out[3]["role"] == "user"
    assert stats.added == 1 and stats.changed


def test_synthetic_result_name_falls_back_to_unknown() -> None:
    call = {"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "arguments": {}}]}
    out, _ = repair_tool_pairing([call])
    assert out[1] == synthetic("c1", "unknown")


def test_results_ordered_by_call_order_and_moved_before_other_messages() -> None:
    a1 = assistant("c1", "c2", "c3")
    r3, r1, r2 = result("c3"), result("c1"), result("c2")
    note = user("interjection")
    out, stats = repair_tool_pairing([a1, r3, note, r1, r2])
    assert_same_objects(out, [a1, r1, r2, r3, note])
    assert stats.moved == 3
    assert stats.added == stats.dropped_orphans == stats.dropped_duplicates == 0


def test_results_after_the_next_assistant_are_orphans() -> None:
    a1, a2 = assistant("c1"), assistant()
    late = result("c1")
    out, stats = repair_tool_pairing([a1, a2, late])
    assert out[0] is a1
    assert out[1] == synthetic("c1", "tool_c1")
    assert out[2] is a2
    assert len(out) == 3
    assert stats.dropped_orphans == 1 and stats.added == 1


def test_leading_orphan_result_dropped() -> None:
    u = user()
    out, stats = repair_tool_pairing([result("c0"), u])
    assert_same_objects(out, [u])
    assert stats.dropped_orphans == 1


def test_result_after_assistant_without_calls_dropped() -> None:
    a = assistant()
    out, stats = repair_tool_pairing([a, result("c1")])
    assert_same_objects(out, [a])
    assert stats.dropped_orphans == 1


def test_result_for_another_call_in_span_dropped() -> None:
    a1, r1 = assistant("c1"), result("c1")
    out, stats = repair_tool_pairing([a1, result("c9"), r1])
    assert_same_objects(out, [a1, r1])
    assert stats.dropped_orphans == 1


def test_duplicate_result_first_wins() -> None:
    a1 = assistant("c1")
    first, second = result("c1", "first"), result("c1", "second")
    out, stats = repair_tool_pairing([a1, first, second])
    assert_same_objects(out, [a1, first])
    assert stats.dropped_duplicates == 1


def test_result_id_seen_in_an_earlier_span_is_a_duplicate() -> None:
    a1, r1, a2 = assistant("c1"), result("c1"), assistant("c1")
    again = result("c1")
    out, stats = repair_tool_pairing([a1, r1, a2, again])
    assert out[:3] == [a1, r1, a2]
    assert out[3] == synthetic("c1", "tool_c1")
    assert stats.dropped_duplicates == 1 and stats.added == 1


def test_repeated_call_id_in_one_message_answered_once() -> None:
    call = {"type": "toolCall", "id": "c1", "name": "x", "arguments": {}}
    a1 = {"role": "assistant", "content": [call, dict(call)]}
    r1 = result("c1")
    out, _ = repair_tool_pairing([a1, r1])
    assert_same_objects(out, [a1, r1])


def test_tool_use_id_results_and_variant_call_blocks_pair() -> None:
    a1 = {
        "role": "assistant",
        "content": [
            {"type": "toolUse", "id": "u1", "name": "a", "input": {}},
            {"type": "functionCall", "id": "u2", "name": "b", "arguments": "{}"},
        ],
    }
    r1 = {"role": "toolResult", "toolUseId": "u1", "content": "x"}
    r2 = {"role": "toolResult", "toolCallId": "u2", "content": "y"}
    out, stats = repair_tool_pairing([a1, r2, r1])
    assert_same_objects(out, [a1, r1, r2])
    assert stats.added == 0


def test_call_blocks_without_id_are_not_calls() -> None:
    a1 = {"role": "assistant", "content": [{"type": "toolCall", "name": "x", "arguments": {}}]}
    out, stats = repair_tool_pairing([a1])
    assert_same_objects(out, [a1])
    assert not stats.changed


def test_errored_or_aborted_assistant_gets_no_synthetic_result() -> None:
    for reason in ("error", "aborted"):
        a1 = assistant("c1", stopReason=reason)
        u = user()
        out, stats = repair_tool_pairing([a1, u])
        assert_same_objects(out, [a1, u])
        assert stats.added == 0


def test_errored_assistant_results_are_dropped() -> None:
    a1 = assistant("c1", stopReason="error")
    u = user()
    out, stats = repair_tool_pairing([a1, result("c1"), u])
    assert_same_objects(out, [a1, u])
    assert stats.dropped_orphans == 1


def test_finished_assistant_still_synthesizes() -> None:
    out, _ = repair_tool_pairing([assistant("c1", stopReason="toolUse")])
    assert out[1] == synthetic("c1", "tool_c1")


def test_pairing_unchanged_reports_no_change() -> None:
    messages = [user(), assistant("c1"), result("c1")]
    out, stats = repair_tool_pairing(messages)
    assert_same_objects(out, messages)
    assert not stats.changed


# Consecutive users.


def test_consecutive_users_merged_into_blocks() -> None:
    first = user("[Session History Summary]\nsummary", timestamp=1)
    second = {"role": "user", "content": [{"type": "text", "text": "now"}], "timestamp": 2}
    out = merge_consecutive_users([first, second])
    assert out == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "[Session History Summary]\nsummary"},
                {"type": "text", "text": "now"},
            ],
            "timestamp": 1,
        }
    ]
    assert first["content"] == "[Session History Summary]\nsummary"


def test_merge_hoists_tool_result_blocks() -> None:
    tr = {"type": "tool_result", "tool_use_id": "x", "content": "ok"}
    image = {"type": "image", "data": "AA", "mimeType": "image/png"}
    out = merge_consecutive_users([user("a"), {"role": "user", "content": [image, tr]}, user("b")])
    assert out[0]["content"] == [
        tr,
        {"type": "text", "text": "a"},
        image,
        {"type": "text", "text": "b"},
    ]


def test_merge_keeps_single_users_as_same_objects() -> None:
    messages = [user("a"), assistant(), user("b")]
    assert_same_objects(merge_consecutive_users(messages), messages)


def test_users_made_consecutive_by_dropped_orphan_are_merged() -> None:
    out = make_provider_valid([user("a"), result("orphan"), user("b")])
    assert out == [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    ]


# Alternation.


def test_no_content_user_between_consecutive_assistants() -> None:
    a1, a2, a3 = assistant(text="1"), assistant(text="2"), assistant(text="3")
    out = ensure_alternation([a1, a2, a3])
    assert out[0] is a1 and out[2] is a2 and out[4] is a3
    assert out[1] == out[3] == {"role": "user", "content": "(no content)"}
    assert out[1] is not out[3]


def test_tool_result_between_assistants_is_enough() -> None:
    a1, r1, a2 = assistant("c1"), result("c1"), assistant()
    assert_same_objects(ensure_alternation([a1, r1, a2]), [a1, r1, a2])


def test_synthetic_result_separates_assistants() -> None:
    out = make_provider_valid([assistant("c1"), assistant()])
    assert [m["role"] for m in out] == ["assistant", "toolResult", "assistant"]


# Blank text blocks.


def test_blank_text_blocks_removed() -> None:
    call = {"type": "toolCall", "id": "c1", "name": "x", "arguments": {}}
    message = {"role": "assistant", "content": [{"type": "text", "text": "  \n"}, call]}
    out = drop_blank_text_blocks(message)
    assert out == {"role": "assistant", "content": [call]}
    assert message["content"][0]["text"] == "  \n"


def test_blank_only_content_left_as_is() -> None:
    message = {"role": "user", "content": [{"type": "text", "text": ""}]}
    assert drop_blank_text_blocks(message) is message


def test_message_without_blank_blocks_is_same_object() -> None:
    message = {"role": "user", "content": [{"type": "text", "text": "x"}]}
    assert drop_blank_text_blocks(message) is message
    text_message = user("")
    assert drop_blank_text_blocks(text_message) is text_message


def test_pipeline_removes_blank_text_of_merged_users() -> None:
    out = make_provider_valid([user("   "), user("real")])
    assert out == [{"role": "user", "content": [{"type": "text", "text": "real"}]}]


def test_unknown_blocks_and_fields_preserved() -> None:
    thinking = {"type": "thinking", "thinking": "t", "thinkingSignature": "sig"}
    a1 = {
        "role": "assistant",
        "content": [thinking, {"type": "toolCall", "id": "c1", "name": "x", "arguments": {}}],
        "usage": {"input": 3},
        "custom": [1],
    }
    r1 = {**result("c1"), "details": {"ui": True}, "isError": False}
    out = make_provider_valid([user(), a1, r1])
    assert out[1] is a1 and out[2] is r1


# The one-pass check that lets a valid history skip the passes.


def _kinds() -> list[dict]:
    """One of each kind of message the passes treat differently."""
    return [
        user(),
        user(content=[{"type": "text", "text": " "}, {"type": "text", "text": "u"}]),
        user(content=[{"type": "text", "text": " "}]),
        {"role": "assistant", "content": "plain"},
        assistant(),
        assistant("a"),
        assistant("a", "b"),
        assistant("b", "a"),
        assistant("a", "a"),
        assistant("b", stopReason="error"),
        result("a"),
        result("b"),
        {"role": "toolResult", "content": [{"type": "text", "text": "no id"}]},
        {"role": "custom", "content": "bookkeeping"},
    ]


def _histories(length: int) -> list[list[dict]]:
    histories: list[list[dict]] = [[]]
    for _ in range(length):
        histories = [[*h, k] for h in histories for k in _kinds()]
    return histories


def test_the_one_pass_check_answers_as_the_passes_do() -> None:
    """Every history of up to four messages of these kinds (41,371 histories): the one-pass check
    finds nothing to do for exactly the histories the passes return unchanged, and for those it
    finds only users to merge, make_provider_valid answers what the passes answer."""
    import app.assembly.provider_validity as pv

    verdicts: Counter[bool | None] = Counter()
    for length in range(5):
        for history in _histories(length):
            history = copy.deepcopy(history)  # distinct objects, as stored messages are
            normalized = [pv._normalize_assistant(m) for m in history]
            paired, _ = repair_tool_pairing(normalized)
            merged = ensure_alternation(merge_consecutive_users(paired))
            slow = [drop_blank_text_blocks(m) for m in merged]
            unchanged = len(slow) == len(history) and all(
                a is b for a, b in zip(slow, history, strict=True)
            )
            verdict = pv._only_users_to_merge(history)
            verdicts[verdict] += 1
            assert (verdict is False) == unchanged, history
            out = make_provider_valid(history)
            assert out == slow, history
            kept = [[any(m is h for h in history) for m in answer] for answer in (out, slow)]
            assert kept[0] == kept[1], history  # the same messages come back as the same objects
    assert verdicts[False] > 100 and verdicts[True] > 100  # both shortcuts are taken
