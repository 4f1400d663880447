"""bench/intervals.py: paired bootstrap intervals of a difference in mean score."""

from __future__ import annotations

import random

import pytest

from bench.intervals import paired_interval


def test_identical_scores_give_a_zero_width_interval_at_zero() -> None:
    scores = [0.0, 1.0, 0.5, 1.0]
    assert paired_interval(scores, scores) == (0.0, 0.0)


def test_a_constant_difference_is_the_whole_interval() -> None:
    ours = [1.0, 1.0, 1.0, 1.0]
    theirs = [0.5, 0.5, 0.5, 0.5]
    assert paired_interval(ours, theirs) == pytest.approx((0.5, 0.5))


def test_the_interval_holds_the_observed_mean_and_narrows_with_more_questions() -> None:
    rng = random.Random(7)
    theirs = [float(rng.random() < 0.6) for _ in range(400)]
    ours = [1.0 if rng.random() < 0.2 else t for t in theirs]  # ours finds a fifth of the misses
    observed = sum(o - t for o, t in zip(ours, theirs, strict=True)) / len(ours)
    wide = paired_interval(ours[:50], theirs[:50])
    narrow = paired_interval(ours, theirs)
    assert narrow[0] <= observed <= narrow[1]
    assert narrow[0] > 0  # a gain on 400 questions is told from chance
    assert narrow[1] - narrow[0] < wide[1] - wide[0]


def test_pairs_are_kept_together() -> None:
    # Each question: both systems right or both wrong, except where ours alone is right. Drawn
    # apart, the two lists' means would vary independently and the interval would reach below 0.
    theirs = [1.0, 0.0] * 50
    ours = [1.0, 0.0] * 49 + [1.0, 1.0]
    low, high = paired_interval(ours, theirs)
    assert low >= 0.0 and high <= 0.03


def test_unequal_lengths_are_refused_and_no_questions_give_no_interval() -> None:
    with pytest.raises(ValueError):
        paired_interval([1.0], [1.0, 0.0])
    low, high = paired_interval([], [])
    assert low != low and high != high  # nan
