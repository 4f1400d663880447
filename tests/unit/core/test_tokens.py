"""The token estimator (docs/lifecycle.md, "Token estimator"): counted by runs, equal to the weighted
per-character sum it is defined as."""

from __future__ import annotations

import math
import random

import pytest

from app.core.tokens import _WIDE_RANGES, estimate_text_tokens, text_weight


def per_character(text: str) -> float:
    """The definition: 1.5 for a wide code point, 2.0 for another astral one, else 0.25."""
    total = 0.0
    for char in text:
        code = ord(char)
        if any(start <= code <= end for start, end in _WIDE_RANGES):
            total += 1.5
        elif code > 0xFFFF:
            total += 2.0
        else:
            total += 0.25
    return total


EDGES = [
    0x10FF,
    0x1100,
    0x11FF,
    0x1200,
    0x2FFF,
    0x3000,
    0x303F,
    0x3040,
    0x4E00,
    0x9FFF,
    0xFF00,
    0xFFEF,
    0xFFF0,
    0xFFFF,
    0x10000,
    0x1F600,
    0x1FFFF,
    0x20000,
    0x2EBEF,
    0x2EBF0,
    0x10FFFF,
]


@pytest.mark.parametrize("code", EDGES)
def test_range_edges_weigh_as_defined(code: int) -> None:
    text = chr(code) + "é"
    assert text_weight(text) == per_character(text)


def test_random_texts_weigh_as_defined() -> None:
    rng = random.Random(8)
    pool = [
        chr(c)
        for c in (
            *range(32, 0x2000, 7),
            *range(0x3000, 0xA000, 13),
            *range(0xAC00, 0xD7A0, 17),
            *range(0xF900, 0x10000, 11),
            *range(0x10000, 0x30000, 101),
            *range(0xE0000, 0x10FFFF, 997),
        )
    ]
    for _ in range(2000):
        text = "".join(rng.choice(pool) for _ in range(rng.randint(0, 60)))
        assert text_weight(text) == per_character(text)
        assert estimate_text_tokens(text) == math.ceil(per_character(text))


def test_ascii_and_empty() -> None:
    assert estimate_text_tokens("") == 0
    assert estimate_text_tokens(None) == 0
    assert estimate_text_tokens("abcde") == 2
    assert estimate_text_tokens("部署失败") == 6
