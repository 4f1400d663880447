"""app/api/json_body.py: a body is marked checked only where the model's own walk would find
nothing to refuse; anything doubtful is left to that walk."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from app.api.json_body import decode_body
from app.api.schemas.base import (
    MAX_JSON_DEPTH,
    CheckedJson,
    json_value_problem,
    nested_deeper_than,
)

UNSTORABLE = [
    b'{"a": NaN}',
    b'{"a": [1, -Infinity]}',
    b'{"a": {"b": 1e400}}',
    b'{"a": -1.5e309}',
    b'{"a": "x\\ud800"}',
    b'{"k\\udfff": 1}',
    '{"a": "\ud800"}'.encode(
        "utf-8", "surrogatepass"
    ),  # surrogate bytes, decoded with surrogatepass
    b'{"a": ' + b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1) + b"}",
]


@pytest.mark.parametrize("body", UNSTORABLE)
def test_a_body_the_model_must_refuse_is_never_marked_checked(body: bytes) -> None:
    data = decode_body(body)
    assert type(data) is not CheckedJson
    assert json_value_problem(data) is not None


@pytest.mark.parametrize(
    "body",
    [
        b'{"a": 1.5, "b": [1, 2, {"c": "d"}], "e": null, "f": true}',
        '{"text": "한국어 中文 emoji 😀"}'.encode(),  # ED 95 9C: Hangul, not a surrogate
        b'{"n": 123456789012345678901234567890}',
        b'{"a": ' + b"[" * (MAX_JSON_DEPTH - 1) + b"]" * (MAX_JSON_DEPTH - 1) + b"}",
    ],
)
def test_a_storable_object_is_marked_checked_with_the_same_value(body: bytes) -> None:
    data = decode_body(body)
    assert type(data) is CheckedJson
    assert data == json.loads(body)
    assert json_value_problem(data) is None


def test_doubtful_but_storable_bodies_are_left_to_the_walk() -> None:
    # An escaped (valid) surrogate pair, a top-level array: not marked, and the walk finds nothing
    # wrong with them.
    for body in (b'{"a": "\\ud83d\\ude00"}', b"[1, 2]"):
        data = decode_body(body)
        assert type(data) is not CheckedJson
        assert json_value_problem(data) is None


def test_constants_are_found_by_the_decoder_not_in_strings() -> None:
    assert type(decode_body(b'{"a": "NaN and Infinity are words here"}')) is CheckedJson


def _random_value(rng: random.Random, depth: int) -> Any:
    pick = rng.random()
    if depth > 6 or pick < 0.4:
        return rng.choice([1, -2.5, "text", "x" * 40, None, True, 1e300, "中文", "ok\n"])
    if pick < 0.7:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {f"k{i}": _random_value(rng, depth + 1) for i in range(rng.randint(0, 4))}


def test_marking_agrees_with_the_walk_on_random_bodies() -> None:
    rng = random.Random(8)
    tokens = [b"NaN", b"Infinity", b"1e999", b'"\\udc00"', b'"fine"', b"2.5"]
    for _ in range(500):
        text = json.dumps({"v": _random_value(rng, 0), "w": "@"}).encode()
        body = text.replace(b'"@"', rng.choice(tokens))
        data = decode_body(body)
        if type(data) is CheckedJson:
            assert json_value_problem(data) is None, body


@pytest.mark.parametrize("shape", ["list", "dict", "mixed"])
def test_the_nesting_rule_is_the_walks(shape: str) -> None:
    for depth in range(MAX_JSON_DEPTH + 10):
        value: Any = "leaf"
        for level in range(depth):
            as_list = shape == "list" or (shape == "mixed" and level % 2)
            value = [value] if as_list else {"k": value}
        assert nested_deeper_than(value) == (json_value_problem(value) is not None), depth
