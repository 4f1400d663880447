"""app/api/json_body.py: a body is decoded as json.loads decodes it, and marked checked only where
the model's own walk would find nothing to refuse; anything doubtful is left to that walk."""

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
    nesting_and_numbers_fit,
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


def test_an_escaped_surrogate_pair_is_one_character_and_storable() -> None:
    data = decode_body(b'{"a": "\\ud83d\\ude00"}')
    assert type(data) is CheckedJson
    assert data == {"a": "\U0001f600"}


@pytest.mark.parametrize(
    "body",
    [
        b"[1, 2]",  # not an object: the model answers it
        b'\xef\xbb\xbf{"a": 1}',  # a byte-order mark, which the fast parser refuses
        '{"a": "utf-16"}'.encode("utf-16"),
        '{"a": "utf-32"}'.encode("utf-32"),
    ],
)
def test_doubtful_but_storable_bodies_are_left_to_the_walk(body: bytes) -> None:
    data = decode_body(body)
    assert type(data) is not CheckedJson
    assert data == json.loads(body)
    assert json_value_problem(data) is None


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"{",
        b'{"a": 1,}',
        b"[1,]",
        b"01",
        b"1.",
        b".5",
        b"+1",
        b"'a'",
        b'"a\nb"',
        b"tru",
        b'{"a": 1} x',
        b'"\\x"',
        b'"\xc0\x80"',
    ],
)
def test_malformed_json_raises_what_json_loads_raises(body: bytes) -> None:
    try:
        json.loads(body)
    except ValueError as expected:
        with pytest.raises(type(expected)):
            decode_body(body)
    else:  # pragma: no cover - every body above is malformed
        pytest.fail(f"{body!r} is valid JSON")


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
        assert nesting_and_numbers_fit(value) == (json_value_problem(value) is None), depth


@pytest.mark.parametrize("bad", [float("inf"), float("-inf"), float("nan")])
def test_the_number_rule_is_the_walks_at_every_depth(bad: float) -> None:
    assert not nesting_and_numbers_fit(bad)
    assert nesting_and_numbers_fit(1.5)
    for depth in range(12):
        for shape in ("list", "dict"):
            value: Any = bad
            for level in range(depth):
                value = (
                    [1.5, value, "x"] if shape == "list" or level % 3 else {"a": 2.5, "b": value}
                )
            assert not nesting_and_numbers_fit({"v": value}), (depth, shape)
            assert json_value_problem({"v": value}) is not None


def test_decoding_equals_json_loads_on_random_bodies() -> None:
    rng = random.Random(11)
    numbers = [
        b"0",
        b"-0",
        b"-0.0",
        b"1e5",
        b"1E+5",
        b"2.5e-3",
        b"1e308",
        b"123456789012345678901234567890",
        b"0.1000000000000000055511151231257827",
        b"4.9e-324",
        b"-17",
        b"3.141592653589793",
    ]
    for _ in range(400):
        text = json.dumps(
            {"v": _random_value(rng, 0), "w": "@", "s": "\u00e9\u4e2d\U0001f600\x00\x1f\\"},
            ensure_ascii=rng.random() < 0.5,
        ).encode()
        body = text.replace(b'"@"', rng.choice(numbers))
        assert decode_body(body) == json.loads(body), body
