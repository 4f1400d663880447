"""Pending-token window: incremental update and closed form (docs/peers.md, OpenViking §2.4)."""

from __future__ import annotations

import random

import pytest

from app.sessions.window import (
    advance_pending_tokens,
    pending_tokens_closed_form,
    pushed_out_positions,
)


def append_all(tokens: list[int], keep: int, batch_sizes: list[int]) -> int:
    """Append ``tokens`` in batches from an empty session, as capture does."""
    pending = 0
    live: list[int] = []
    offset = 0
    for size in batch_sizes:
        batch = tokens[offset : offset + size]
        offset += size
        needed = [p for p in pushed_out_positions(len(live), keep, len(batch)) if p < len(live)]
        stored = {p: live[p] for p in needed}  # only what the caller would fetch
        pending = advance_pending_tokens(pending, keep, len(live), batch, stored)
        live.extend(batch)
    return pending


# Closed form.


def test_reference_example_keep_two() -> None:
    assert pending_tokens_closed_form([100, 200, 300, 400, 500], 2) == 600


def test_reference_example_keep_more_than_total() -> None:
    assert pending_tokens_closed_form([100, 200, 300], 10) == 0


def test_keep_zero_sums_everything() -> None:
    assert pending_tokens_closed_form([100, 200, 300], 0) == 600


def test_keep_equal_to_total_is_zero() -> None:
    assert pending_tokens_closed_form([100, 200, 300], 3) == 0


def test_empty_is_zero() -> None:
    assert pending_tokens_closed_form([], 0) == 0
    assert pending_tokens_closed_form([], 5) == 0


def test_negative_keep_acts_as_zero() -> None:
    assert pending_tokens_closed_form([100, 200, 300], -4) == 600


def test_negative_token_values_clamped() -> None:
    assert pending_tokens_closed_form([-50, 200, 300], 1) == 200


# Incremental.


def test_incremental_reference_example_one_by_one() -> None:
    assert append_all([100, 200, 300, 400, 500], 2, [1] * 5) == 600


def test_incremental_reference_example_one_batch() -> None:
    assert append_all([100, 200, 300, 400, 500], 2, [5]) == 600


def test_incremental_keep_zero_adds_each_message() -> None:
    assert append_all([100, 200, 300], 0, [2, 1]) == 600


def test_incremental_keep_above_total_adds_nothing() -> None:
    assert append_all([100, 200, 300], 10, [3]) == 0
    assert append_all([100, 200, 300], 3, [1, 1, 1]) == 0


def test_incremental_negative_keep_acts_as_zero() -> None:
    assert append_all([100, 200], -1, [2]) == 300


def test_pushed_out_positions_keep_zero_are_the_appended_messages() -> None:
    assert pushed_out_positions(4, 0, 3) == [4, 5, 6]
    assert pushed_out_positions(4, -2, 1) == [4]


def test_pushed_out_positions_window() -> None:
    # live grows 3 -> 6 with keep 2: each append pushes live[-3] out.
    assert pushed_out_positions(3, 2, 3) == [1, 2, 3]
    # The window fills first: nothing is pushed out until the count exceeds keep.
    assert pushed_out_positions(0, 2, 4) == [0, 1]
    assert pushed_out_positions(1, 5, 3) == []


def test_pushed_out_positions_no_appends() -> None:
    assert pushed_out_positions(10, 2, 0) == []


def test_advance_uses_appended_tokens_for_new_positions() -> None:
    # keep 1, live [10], append [20, 30]: pushed out are live[0]=10 (stored) and live[1]=20 (new).
    assert advance_pending_tokens(0, 1, 1, [20, 30], {0: 10}) == 30


def test_advance_requires_pushed_out_stored_tokens() -> None:
    with pytest.raises(KeyError):
        advance_pending_tokens(0, 1, 1, [20], {})


def test_advance_clamps_negative_pending() -> None:
    assert advance_pending_tokens(-100, 0, 0, [5], {}) == 5


def test_advance_continues_from_existing_pending() -> None:
    live = [100, 200, 300, 400]
    pending = pending_tokens_closed_form(live, 2)
    assert pending == 300
    stored = {p: live[p] for p in pushed_out_positions(len(live), 2, 1) if p < len(live)}
    assert stored == {2: 300}
    assert advance_pending_tokens(pending, 2, len(live), [500], stored) == 600


def test_incremental_equals_closed_form_for_random_sequences() -> None:
    rng = random.Random(20260329)
    for _ in range(500):
        n = rng.randint(0, 30)
        tokens = [rng.randint(0, 2000) for _ in range(n)]
        keep = rng.randint(-2, 35)
        batches: list[int] = []
        remaining = n
        while remaining:
            size = rng.randint(1, remaining)
            batches.append(size)
            remaining -= size
        assert append_all(tokens, keep, batches) == pending_tokens_closed_form(tokens, keep), (
            tokens,
            keep,
            batches,
        )


def test_incremental_after_rebuild_matches_closed_form() -> None:
    # A commit rebuilds the value with the closed form; later appends continue incrementally.
    rng = random.Random(7)
    for _ in range(300):
        live = [rng.randint(0, 500) for _ in range(rng.randint(0, 20))]
        keep = rng.randint(0, 12)
        pending = pending_tokens_closed_form(live, keep)
        appended = [rng.randint(0, 500) for _ in range(rng.randint(0, 10))]
        needed = pushed_out_positions(len(live), keep, len(appended))
        stored = {p: live[p] for p in needed if p < len(live)}
        result = advance_pending_tokens(pending, keep, len(live), appended, stored)
        assert result == pending_tokens_closed_form(live + appended, keep)
