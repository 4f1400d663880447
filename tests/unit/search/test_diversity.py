"""MMR order (app/search/diversity.py), checked against a direct transcription of its definition."""

from __future__ import annotations

import random

import pytest

from app.search.diversity import MMR_TEXT_CHARS, mmr_order, mmr_tokens


def by_definition(
    relevance: list[float], tokens: list[frozenset[str]], lambda_: float, limit: int
) -> list[int]:
    def similarity(a: frozenset[str], b: frozenset[str]) -> float:
        return len(a & b) / len(a | b) if a | b else 0.0

    chosen: list[int] = []
    rest = list(range(len(relevance)))
    while rest and len(chosen) < limit:

        def value(i: int) -> float:
            closest = max((similarity(tokens[i], tokens[j]) for j in chosen), default=0.0)
            return lambda_ * min(1.0, max(0.0, relevance[i])) - (1 - lambda_) * closest

        pick = max(rest, key=lambda i: (value(i), relevance[i], -i))
        rest.remove(pick)
        chosen.append(pick)
    return chosen


@pytest.mark.parametrize("seed", range(40))
def test_order_matches_the_definition(seed: int) -> None:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(8)]
    size = rng.randint(0, 12)
    relevance = [rng.choice([0.0, 0.25, 0.5, 0.75, 1.0, 1.2, -0.1]) for _ in range(size)]
    tokens = [frozenset(rng.sample(words, rng.randint(0, 4))) for _ in range(size)]
    lambda_ = rng.choice([0.0, 0.3, 0.7, 1.0])
    limit = rng.randint(0, size + 1)
    got = [i for i, _ in mmr_order(relevance, tokens, lambda_, limit)]
    assert got == by_definition(relevance, tokens, lambda_, limit)


def test_a_near_duplicate_steps_back_and_values_are_reported() -> None:
    tokens = [mmr_tokens(t) for t in ("deploy failed", "Deploy failed!", "disk full on host")]
    order = mmr_order([1.0, 0.95, 0.6], tokens, 0.7)
    assert [i for i, _ in order] == [0, 2, 1]
    assert [round(v, 3) for _, v in order] == [0.7, 0.42, round(0.7 * 0.95 - 0.3, 3)]


def test_lambda_outside_zero_to_one_is_refused() -> None:
    with pytest.raises(ValueError, match="lambda_"):
        mmr_order([1.0], [frozenset()], 1.5)


def test_only_a_texts_opening_is_compared() -> None:
    opening = "release notes for the billing service " * (MMR_TEXT_CHARS // 38 + 1)
    cut = opening[:MMR_TEXT_CHARS]
    assert mmr_tokens(cut + " zebra quokka") == mmr_tokens(cut) == mmr_tokens(opening)
    assert "zebra" in mmr_tokens("zebra " + cut)
