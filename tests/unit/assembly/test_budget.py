"""Assembly budget arithmetic (docs/lifecycle.md, Assemble steps 1 and 4)."""

from __future__ import annotations

import math

import pytest

from app.assembly.budget import (
    DEFAULT_TOKEN_BUDGET,
    message_budget,
    reserved_tokens,
    resolve_budget,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (64000, 64000),
        (4096.9, 4096),
        (1, 1),
        (None, DEFAULT_TOKEN_BUDGET),
        (0, DEFAULT_TOKEN_BUDGET),
        (-5, DEFAULT_TOKEN_BUDGET),
        (0.5, DEFAULT_TOKEN_BUDGET),
        (math.inf, DEFAULT_TOKEN_BUDGET),
        (-math.inf, DEFAULT_TOKEN_BUDGET),
        (math.nan, DEFAULT_TOKEN_BUDGET),
        ("64000", DEFAULT_TOKEN_BUDGET),
        (True, DEFAULT_TOKEN_BUDGET),
        ([1000], DEFAULT_TOKEN_BUDGET),
    ],
)
def test_resolve_budget(value: object, expected: int) -> None:
    result = resolve_budget(value)
    assert result == expected
    assert type(result) is int


def test_default_budget_value() -> None:
    assert DEFAULT_TOKEN_BUDGET == 128000


@pytest.mark.parametrize(
    ("budget", "expected"),
    [
        (128000, 20000),  # floor beats 15% (19200)
        (200000, 30000),  # 15% beats the floor
        (40000, 20000),  # the floor applies from 40000 on
        (39999, 39999 * 0.15),  # below 40000 no floor
        (4096, 614.4),
        (1024, 153.6),
        (0, 0),
    ],
)
def test_reserved_tokens(budget: int, expected: float) -> None:
    assert reserved_tokens(budget) == pytest.approx(expected)


def test_reserved_never_exceeds_budget() -> None:
    for budget in (0, 1, 100, 39999, 40000, 50000, 10**6):
        assert 0 <= reserved_tokens(budget) <= budget


def test_message_budget() -> None:
    assert message_budget(128000, 327, 1000) == 128000 - 20000 - 327 - 1000
    assert message_budget(4096, 0, 0) == 3481  # 4096 - 614.4 floored
    assert message_budget(4096, 3000, 1000) == 0
