"""Paired bootstrap intervals of a difference in mean score between two systems on the same
questions: how far a margin such as "+7.8 points over the dense baseline" could move with another
draw of questions of the same kind. Pure."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

RESAMPLES = 4000
SEED = 20261129


def paired_interval(
    ours: Sequence[float],
    theirs: Sequence[float],
    level: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> tuple[float, float]:
    """The central ``level`` interval of mean(ours - theirs) over ``resamples`` draws of the
    questions with replacement (each draw keeps a question's two scores together)."""
    if len(ours) != len(theirs):
        raise ValueError("the two systems must be scored on the same questions")
    if not ours:
        return (float("nan"), float("nan"))
    differences = np.asarray(ours, dtype=float) - np.asarray(theirs, dtype=float)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(differences), size=(resamples, len(differences)))
    means = differences[draws].mean(axis=1)
    tail = (1 - level) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)
