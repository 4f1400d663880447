"""Fingerprints and occurrence-aware duplicate detection (lifecycle.md, Capture step 2)."""

from __future__ import annotations

import copy
import hashlib
import json

from app.sessions.fingerprint import (
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
        {"content": "héllo", "role": "user", "timestamp": 7},
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


def test_fingerprint_depends_on_role_content_tool_call_id_and_timestamp() -> None:
    base = {"role": "toolResult", "content": "out", "toolCallId": "c1", "timestamp": 1}
    variants = [
        {**base, "role": "user"},
        {**base, "content": "other"},
        {**base, "toolCallId": "c2"},
        {**base, "timestamp": 2},
        {k: v for k, v in base.items() if k != "timestamp"},
        {k: v for k, v in base.items() if k != "toolCallId"},
    ]
    fingerprints = {fp(base), *(fp(v) for v in variants)}
    assert len(fingerprints) == len(variants) + 1


def test_tool_use_id_variant_is_part_of_identity() -> None:
    a = {"role": "toolResult", "content": "out", "toolUseId": "u1"}
    b = {"role": "toolResult", "content": "out", "toolUseId": "u2"}
    assert fp(a) != fp(b)


def test_null_identity_fields_count_as_absent() -> None:
    assert fp({"role": "user", "content": "x", "timestamp": None}) == fp(
        {"role": "user", "content": "x"}
    )
    assert fingerprint_payload({"role": "user", "content": "x", "toolCallId": None}) == {
        "role": "user",
        "content": "x",
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
