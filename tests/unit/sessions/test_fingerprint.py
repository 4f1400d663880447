"""Fingerprints and occurrence-aware duplicate detection (docs/lifecycle.md, Capture step 2)."""

from __future__ import annotations

import copy
import hashlib
import json

from app.core.rules.fingerprint import (
    fingerprint_counts,
    fingerprint_payload,
    message_fingerprint,
    new_message_indexes,
)


def fp(message: dict) -> str:
    return message_fingerprint(message)


def test_fingerprint_is_sha256_of_sorted_compact_json() -> None:
    message = {"role": "user", "content": "héllo", "timestamp": 7, "ignored": True}
    expected_json = json.dumps(
        {"content": [{"text": "héllo", "type": "text"}], "role": "user", "timestamp": 7},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    assert fp(message) == hashlib.sha256(expected_json.encode("utf-8")).hexdigest()
    assert len(fp(message)) == 64


def test_fingerprint_ignores_key_order_and_other_fields() -> None:
    a = {"role": "assistant", "content": [{"type": "text", "text": "x", "z": 1}], "usage": {"a": 1}}
    b = {"usage": {"b": 2}, "content": [{"z": 1, "text": "x", "type": "text"}], "role": "assistant"}
    assert fp(a) == fp(b)


def test_fingerprint_depends_on_role_content_and_timestamp() -> None:
    base = {"role": "toolResult", "content": "out", "toolCallId": "c1", "timestamp": 1}
    variants = [
        {**base, "role": "user"},
        {**base, "content": "other"},
        {**base, "timestamp": 2},
        {k: v for k, v in base.items() if k != "timestamp"},
    ]
    fingerprints = {fp(base), *(fp(v) for v in variants)}
    assert len(fingerprints) == len(variants) + 1


def test_untimestamped_tool_messages_are_told_apart_by_their_ids() -> None:
    base = {"role": "toolResult", "content": "out", "toolCallId": "c1"}
    variants = [{**base, "toolCallId": "c2"}, {k: v for k, v in base.items() if k != "toolCallId"}]
    assert len({fp(base), *(fp(v) for v in variants)}) == 3
    a = {"role": "toolResult", "content": "out", "toolUseId": "u1"}
    b = {"role": "toolResult", "content": "out", "toolUseId": "u2"}
    assert fp(a) != fp(b)
    call = {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "x_1", "name": "read", "arguments": {}}],
    }
    other = {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "x_2", "name": "read", "arguments": {}}],
    }
    assert fp(call) != fp(other)


def _stored_tool_pair() -> list[dict]:
    """A tool call and its result as the 2026.9 host commits them (provider's raw id, details)."""
    return [
        {
            "role": "assistant",
            "timestamp": 1795416088156,
            "stopReason": "toolUse",
            "api": "openai-completions",
            "content": [
                {
                    "type": "toolCall",
                    "id": "call_stub_2",
                    "name": "read",
                    "arguments": {"path": "notes.md"},
                }
            ],
        },
        {
            "role": "toolResult",
            "toolCallId": "call_stub_2",
            "toolName": "read",
            "isError": False,
            "timestamp": 1795416088310,
            "content": [{"type": "text", "text": "PELICAN-42"}],
            "details": {"kind": "text", "content": "PELICAN-42"},
        },
    ]


def test_replayed_tool_pair_has_the_stored_fingerprints() -> None:
    """The host replays stored tool messages with sanitised ids, no details, added metadata."""
    call, result = _stored_tool_pair()
    for replay_id in ("callstub2", "callstub", "a1b2c3d4e"):  # strict, strict9-cut, strict9-hashed
        replayed_call = {
            **call,
            "__openclaw": {"runId": "r"},
            "content": [{**call["content"][0], "id": replay_id}],
        }
        replayed_result = {k: v for k, v in result.items() if k != "details"}
        replayed_result.update(toolCallId=replay_id, __openclaw={"runId": "r"})
        assert fp(replayed_call) == fp(call)
        assert fp(replayed_result) == fp(result)


def test_string_content_and_its_text_block_are_one_content() -> None:
    as_string = {"role": "user", "content": "hello", "timestamp": 5}
    as_blocks = {"role": "user", "content": [{"type": "text", "text": "hello"}], "timestamp": 5}
    assert fp(as_string) == fp(as_blocks)
    assert fp(as_string) != fp({**as_blocks, "content": [{"type": "text", "text": "hello!"}]})


def test_tool_call_arguments_and_name_are_identity() -> None:
    call, _ = _stored_tool_pair()
    block = call["content"][0]
    assert fp(call) != fp({**call, "content": [{**block, "arguments": {"path": "other.md"}}]})
    assert fp(call) != fp({**call, "content": [{**block, "name": "write"}]})


def test_null_identity_fields_count_as_absent() -> None:
    assert fp({"role": "user", "content": "x", "timestamp": None}) == fp(
        {"role": "user", "content": "x"}
    )
    assert fingerprint_payload({"role": "user", "content": "x", "toolCallId": None}) == {
        "role": "user",
        "content": [{"type": "text", "text": "x"}],
    }


def test_fingerprint_does_not_mutate() -> None:
    message = {"role": "user", "content": [{"type": "text", "text": "x"}], "timestamp": 3}
    original = copy.deepcopy(message)
    fp(message)
    assert message == original


def test_new_message_indexes_all_new_for_empty_store() -> None:
    assert new_message_indexes(["a", "b", "c"], 0, {}) == [0, 1, 2]


def test_start_limits_candidates() -> None:
    assert new_message_indexes(["a", "b", "c"], 2, {}) == [2]
    assert new_message_indexes(["a", "b"], 5, {}) == []
    assert new_message_indexes(["a", "b"], -3, {}) == [0, 1]


def test_same_snapshot_twice_stores_nothing_the_second_time() -> None:
    snapshot = ["u1", "a1", "t1", "t1", "a2"]
    first = new_message_indexes(snapshot, 0, {})
    assert first == [0, 1, 2, 3, 4]
    stored = fingerprint_counts([snapshot[i] for i in first])
    assert new_message_indexes(snapshot, 0, stored) == []


def test_overlapping_windows_store_each_message_once() -> None:
    turn1 = ["u1", "a1"]
    stored = fingerprint_counts([turn1[i] for i in new_message_indexes(turn1, 0, {})])
    # The tool loop resends everything; the index claims only the last two are new but it
    # points too early here: the fingerprints catch the overlap.
    turn2 = ["u1", "a1", "t1", "a2"]
    new = new_message_indexes(turn2, 1, stored)
    assert new == [2, 3]
    stored = fingerprint_counts([*turn1, *(turn2[i] for i in new)])
    turn3 = ["u1", "a1", "t1", "a2", "u2"]
    assert new_message_indexes(turn3, 0, stored) == [4]


def test_repeated_identical_message_in_one_snapshot_is_stored_twice() -> None:
    assert new_message_indexes(["x", "x"], 0, {}) == [0, 1]
    assert new_message_indexes(["x", "x"], 0, {"x": 1}) == [1]
    assert new_message_indexes(["x", "x"], 0, {"x": 2}) == []


def test_occurrences_before_start_count() -> None:
    # "x" at 0 is the first occurrence (already stored); the candidate at 2 is the second.
    assert new_message_indexes(["x", "y", "x"], 2, {"x": 1, "y": 1}) == [2]
    assert new_message_indexes(["x", "y", "x"], 2, {"x": 2, "y": 1}) == []


def test_repeat_of_an_old_message_in_a_later_turn_is_new() -> None:
    snapshot = ["yes", "a1", "yes"]
    assert new_message_indexes(snapshot, 2, {"yes": 1, "a1": 1}) == [2]


def test_none_entries_are_neither_counted_nor_selected() -> None:
    assert new_message_indexes([None, "x", None, "x"], 0, {"x": 1}) == [3]
    assert new_message_indexes([None, None], 0, {}) == []


def test_store_ahead_of_snapshot_stores_nothing() -> None:
    assert new_message_indexes(["a", "b"], 0, {"a": 3, "b": 1, "c": 9}) == []


def test_indexes_in_snapshot_order() -> None:
    snapshot = ["b", "a", "b", "c", "a"]
    assert new_message_indexes(snapshot, 0, {"a": 1, "b": 1}) == [2, 3, 4]


def test_fingerprint_counts() -> None:
    assert fingerprint_counts(["a", "b", "a"]) == {"a": 2, "b": 1}
    assert fingerprint_counts([]) == {}


def test_end_to_end_with_real_messages() -> None:
    user = {"role": "user", "content": "run it", "timestamp": 1}
    call = {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {}}],
        "timestamp": 2,
    }
    result = {"role": "toolResult", "toolCallId": "c1", "content": "ok", "timestamp": 3}
    snapshot = [fp(m) for m in (user, call, result)]
    stored = fingerprint_counts(snapshot[:2])
    assert new_message_indexes(snapshot, 0, stored) == [2]
