"""Serialising as json.dumps does; decoding many stored JSON texts at once gives what decoding each
one gives."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.canonical_json import canonical_json, compact_json, decode_many

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(json_values)
def test_the_texts_are_those_of_json_dumps(value: Any) -> None:
    assert compact_json(value) == json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    assert canonical_json(value) == json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )


def test_a_value_json_cannot_hold_raises_as_with_json_dumps() -> None:
    circular: list[Any] = []
    circular.append(circular)
    for value, error in (({"a": {1, 2}}, TypeError), (circular, ValueError)):
        for serialise in (compact_json, canonical_json):
            with pytest.raises(error):
                serialise(value)
    assert compact_json({"a": [1]}) == '{"a":[1]}'  # nothing left over from the failures


@given(st.lists(json_values, max_size=12))
def test_stored_texts_decode_as_one_by_one(values: list[Any]) -> None:
    texts = [compact_json(value) for value in values]
    assert decode_many(texts) == [json.loads(text) for text in texts]


@pytest.mark.parametrize(
    "texts",
    [
        ['{"a":1},{"b":2}', "{}"],  # one text holding two values: three values for two texts
        ['{"a":[{}', "{}]}"],  # two halves of one value: one value for two texts
    ],
)
def test_texts_that_are_not_one_value_each_raise_as_alone(texts: list[str]) -> None:
    with pytest.raises(json.JSONDecodeError):
        decode_many(texts)


def test_a_bad_text_among_good_ones_raises() -> None:
    with pytest.raises(json.JSONDecodeError):
        decode_many(['{"role":"user"}', '{"role":', '{"role":"assistant"}'])


def test_texts_the_fast_parser_refuses_decode_as_json_loads_reads_them() -> None:
    # An escaped lone surrogate (in data older than the request checks): pydantic-core refuses it.
    texts = ['{"a":"\\ud800"}', '{"b":"x"}', '["\\udfff",1]']
    assert decode_many(texts) == [json.loads(text) for text in texts]
