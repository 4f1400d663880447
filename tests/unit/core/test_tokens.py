"""The token estimator (docs/lifecycle.md, "Token estimator"): counted by runs, equal to the weighted
per-character sum it is defined as."""

from __future__ import annotations

import math
import random

import pytest

from app.core.rules.tokens import (
    _WIDE_RANGES,
    ARRAY_FROM_CHARS,
    estimate_text_tokens,
    fit_to_token_budget,
    text_weight,
)


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
@pytest.mark.parametrize("repeat", [1, ARRAY_FROM_CHARS])  # short texts by runs, long as an array
def test_range_edges_weigh_as_defined(code: int, repeat: int) -> None:
    text = chr(code) * repeat + "é"
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
    pool += ["\ud800", "\udfff", *"abc xyz"]  # lone surrogates weigh 0.25 too
    for _ in range(200):
        length = rng.randint(ARRAY_FROM_CHARS - 2, 3 * ARRAY_FROM_CHARS)
        text = "".join(rng.choice(pool) for _ in range(length))
        assert text_weight(text) == per_character(text)


def test_ascii_and_empty() -> None:
    assert estimate_text_tokens("") == 0
    assert estimate_text_tokens(None) == 0
    assert estimate_text_tokens("abcde") == 2
    assert estimate_text_tokens("部署失败") == 6


# fit_to_token_budget


def _words(text: str) -> int:
    """A counter that, like a model's tokenizer, is not one token per character."""
    return len(text.split()) + 2  # two special tokens per text, as an encoder adds


def test_texts_that_fit_are_kept_whole_and_in_order() -> None:
    texts = ["a b", "c d e", "f"]
    assert fit_to_token_budget(texts, 100, _words) == texts
    assert fit_to_token_budget(texts, 4 + 5, _words) == ["a b", "c d e"]  # exactly the budget


def test_the_first_text_that_does_not_fit_is_cut_to_its_longest_fitting_prefix() -> None:
    rng = random.Random(7)
    for _ in range(500):
        texts = [
            " ".join(rng.choice(["x", "yy", "zzz", "中文"]) for _ in range(rng.randint(0, 40)))
            for _ in range(rng.randint(0, 5))
        ]
        budget = rng.randint(0, 80)
        fitted = fit_to_token_budget(texts, budget, _words)
        assert sum(map(_words, fitted)) <= budget
        whole = 0
        while whole < len(fitted) and fitted[whole] == texts[whole]:
            whole += 1
        assert whole >= len(fitted) - 1  # only the last one may be cut
        if whole < len(texts):  # something was cut or left out: nothing more would fit
            cut = fitted[whole] if whole < len(fitted) else ""
            assert texts[whole].startswith(cut)
            used = sum(map(_words, fitted[:whole]))
            longer = texts[whole][: len(cut) + 1]
            assert (
                len(cut) == len(texts[whole])
                or _words(longer) + used > budget
                or not (longer.strip())
            )


def test_a_budget_too_small_for_any_text_keeps_nothing() -> None:
    assert fit_to_token_budget(["a b c"], 2, _words) == []
    assert fit_to_token_budget([], 10, _words) == []
    assert fit_to_token_budget(["a", "b"], 0, len) == []


def test_characters_as_tokens_cut_exactly_at_the_budget() -> None:
    assert fit_to_token_budget(["abcdef", "ghij"], 8, len) == ["abcdef", "gh"]
    assert fit_to_token_budget(["-" * 5000], 510, len) == ["-" * 510]
