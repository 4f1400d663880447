"""A message's similarity from its whole vector and its best passage (app/search/ranking.py),
and each message's nearest passage from a passage KNN (app/db/shared/passage_ids.py)."""

from __future__ import annotations

import itertools
import random

import pytest

from app.db.shared.passage_ids import (
    PASSAGE_STRIDE,
    best_passages,
    passage_id,
    passage_index,
    passage_message,
)
from app.search.ranking import blended_similarity
from app.search.text.passages import MAX_PASSAGES, PASSAGE_WEIGHT


def blend(whole: float, passage: float) -> float:
    return (1 - PASSAGE_WEIGHT) * whole + PASSAGE_WEIGHT * passage


def test_without_passages_the_whole_similarities_stand() -> None:
    assert blended_similarity({1: 0.9, 2: 0.5}, {}, {1: 3}) == {1: 0.9, 2: 0.5}


def test_a_message_found_both_ways_blends_its_two_sides() -> None:
    blended = blended_similarity({1: 0.6}, {1: 0.9, 2: 0.7}, {})
    assert blended[1] == pytest.approx(blend(0.6, 0.9))


def test_a_message_of_one_passage_is_its_own_best_passage() -> None:
    # Message 1 has no passage vectors (one passage): its whole similarity counts twice.
    blended = blended_similarity({1: 0.8, 2: 0.5}, {2: 0.95, 3: 0.7}, {2: 4})
    assert blended[1] == pytest.approx(0.8)


def test_a_missing_side_counts_at_most_the_lowest_similarity_its_list_returned() -> None:
    whole = {1: 0.8, 2: 0.5}
    passages = {2: 0.95, 3: 0.7}
    blended = blended_similarity(whole, passages, {1: 3, 2: 2})
    # 1 has passages, none among the nearest: its best is at most 0.7 (and its whole 0.8).
    assert blended[1] == pytest.approx(blend(0.8, 0.7))
    # 3 is not among the nearest wholes: its whole is at most 0.5.
    assert blended[3] == pytest.approx(blend(0.5, 0.7))
    # A bound never lifts a side above what the message showed on the other.
    low = blended_similarity({1: 0.4, 2: 0.9}, {2: 0.95, 3: 0.6}, {1: 2})
    assert low[1] == pytest.approx(blend(0.4, 0.4))
    assert set(blended) == {1, 2, 3}


def test_blending_against_a_direct_reading_on_random_cases() -> None:
    rng = random.Random(11)
    for _ in range(300):
        ids = range(1, 12)
        whole = {i: rng.random() for i in ids if rng.random() < 0.6}
        passages = {i: rng.random() for i in ids if rng.random() < 0.6}
        counts = {i: rng.choice([0, 2, 5]) for i in ids}
        blended = blended_similarity(whole, passages, counts)
        if not passages:
            assert blended == whole
            continue
        whole_floor, passage_floor = min(whole.values(), default=0.0), min(passages.values())
        assert set(blended) == set(whole) | set(passages)
        for i, value in blended.items():
            own = whole[i] if i in whole else min(passages[i], whole_floor)
            if i in passages:
                best = passages[i]
            elif counts[i] == 0:
                best = own
            else:
                best = min(own, passage_floor)
            assert value == pytest.approx(blend(own, best))


def test_passage_ids_name_their_message() -> None:
    for message_id, index in itertools.product([1, 7, 2**40], range(PASSAGE_STRIDE)):
        assert passage_message(passage_id(message_id, index)) == message_id
        assert passage_index(passage_id(message_id, index)) == index
    assert passage_id(3, 0) != passage_id(2, PASSAGE_STRIDE - 1)
    assert MAX_PASSAGES <= PASSAGE_STRIDE  # every passage of a message has an id of its own


def test_each_message_keeps_its_nearest_passage_in_order() -> None:
    rows = [(passage_id(5, 2), 0.1), (passage_id(9, 0), 0.2), (passage_id(5, 0), 0.3)]
    hits = best_passages(rows)
    assert [(h.row_id, h.score) for h in hits] == [(5, 0.1), (9, 0.2)]
