"""Hybrid search maths (docs/recall.md, Hybrid search; docs/peers.md, OpenClaw §2.4)."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from app.search.diversity import mmr_tokens
from app.search.fusion import (
    DECAYING_CATEGORIES,
    ChunkHit,
    Explain,
    ScoredMemory,
    apply_decay,
    best_then_newest,
    bm25_rank_to_score,
    jaccard,
    merge_hybrid,
    mmr_rerank,
    temporal_decay,
    threshold_and_limit,
    with_best_passage,
)

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def scored(
    mid: str,
    score: float,
    category: str = "entities",
    age_days: float | None = None,
    text: str = "",
) -> ScoredMemory:
    observed = None if age_days is None else NOW - timedelta(days=age_days)
    return ScoredMemory(mid, f"{mid}#0", score, Explain(vector=score), category, observed, text)


@pytest.mark.parametrize(
    ("rank", "expected"),
    [
        (-3.0, 0.75),
        (-1.0, 0.5),
        (0.0, 1.0),
        (1.0, 0.5),
        (3.0, 0.25),
        (math.nan, 0.001),
        (math.inf, 0.001),
        (-math.inf, 0.001),
    ],
)
def test_bm25_rank_to_score_current_formula(rank: float, expected: float) -> None:
    assert bm25_rank_to_score(rank) == pytest.approx(expected)


def test_a_better_bm25_rank_scores_higher() -> None:
    assert bm25_rank_to_score(-8.0) > bm25_rank_to_score(-2.0) > bm25_rank_to_score(-0.5)


def test_merge_weights_both_sides_by_chunk() -> None:
    merged = merge_hybrid([ChunkHit(1, "m1", 0.8)], [ChunkHit(1, "m1", 0.5)])
    assert len(merged) == 1
    assert merged[0].score == pytest.approx(0.7 * 0.8 + 0.3 * 0.5)
    assert merged[0].explain == Explain(vector=0.8, text=0.5)


def test_merge_counts_a_missing_side_as_zero() -> None:
    merged = {
        m.memory_id: m for m in merge_hybrid([ChunkHit(1, "v", 0.9)], [ChunkHit(2, "t", 0.9)])
    }
    assert merged["v"].score == pytest.approx(0.63)
    assert merged["t"].score == pytest.approx(0.27)
    assert merged["t"].explain == Explain(vector=0.0, text=0.9)


def test_merge_keeps_the_best_chunk_of_each_memory() -> None:
    vector = [ChunkHit(1, "m", 0.5), ChunkHit(2, "m", 0.6), ChunkHit(3, "n", 0.55)]
    text = [ChunkHit(1, "m", 0.9)]
    merged = merge_hybrid(vector, text)
    assert [(m.memory_id, m.chunk_id) for m in merged] == [("m", 1), ("n", 3)]
    assert merged[0].score == pytest.approx(0.7 * 0.5 + 0.3 * 0.9)


def test_merge_weights_are_configurable_and_normalised() -> None:
    hits_v, hits_t = [ChunkHit("c", "m", 0.4)], [ChunkHit("c", "m", 1.0)]
    assert merge_hybrid(hits_v, hits_t, 1, 1)[0].score == pytest.approx(0.7)
    assert merge_hybrid(hits_v, hits_t, 7, 3)[0].score == pytest.approx(0.58)
    # Keyword-only mode: the text score itself.
    assert merge_hybrid([], hits_t, vector_weight=0, text_weight=1)[0].score == pytest.approx(1.0)


def test_merge_weights_change_the_ranking() -> None:
    vector = [ChunkHit(1, "semantic", 0.9), ChunkHit(2, "lexical", 0.3)]
    text = [ChunkHit(2, "lexical", 0.95)]
    assert merge_hybrid(vector, text)[0].memory_id == "semantic"
    assert merge_hybrid(vector, text, 0.3, 0.7)[0].memory_id == "lexical"


@pytest.mark.parametrize(("vw", "tw"), [(0, 0), (-0.1, 1), (1, -1)])
def test_merge_rejects_bad_weights(vw: float, tw: float) -> None:
    with pytest.raises(ValueError):
        merge_hybrid([], [], vw, tw)


def test_temporal_decay_halves_every_half_life() -> None:
    assert temporal_decay(0.8, 0) == pytest.approx(0.8)
    assert temporal_decay(0.8, 30) == pytest.approx(0.4)
    assert temporal_decay(0.8, 60) == pytest.approx(0.2)
    assert temporal_decay(0.8, 7, half_life_days=7) == pytest.approx(0.4)
    assert temporal_decay(0.8, -5) == pytest.approx(0.8)  # a future date does not boost


def test_decay_changes_the_ranking_with_a_fixed_now() -> None:
    old_event = scored("old-event", 0.9, "events", age_days=60)
    fresh_event = scored("fresh-event", 0.5, "events", age_days=1)
    old_profile = scored("profile", 0.6, "profile", age_days=400)
    result = apply_decay([old_event, old_profile, fresh_event], NOW)
    assert [m.memory_id for m in result] == ["profile", "fresh-event", "old-event"]
    by_id = {m.memory_id: m for m in result}
    assert by_id["old-event"].score == pytest.approx(0.225)
    assert by_id["old-event"].explain.decay == pytest.approx(0.25)
    assert by_id["profile"].score == 0.6 and by_id["profile"].explain.decay == 1.0


def test_decay_only_touches_dated_categories() -> None:
    assert {"events", "cases"} == DECAYING_CATEGORIES
    evergreen = [
        scored(c, 0.5, c, age_days=90)
        for c in ("profile", "preferences", "entities", "experiences")
    ]
    assert [m.score for m in apply_decay(evergreen, NOW)] == [0.5] * 4
    case = apply_decay([scored("c", 0.5, "cases", age_days=30)], NOW)[0]
    assert case.score == pytest.approx(0.25)


def test_decay_without_a_date_and_with_naive_datetimes() -> None:
    undated = scored("e", 0.5, "events")
    assert apply_decay([undated], NOW)[0].score == 0.5
    naive = replace(undated, observed_at=datetime(2026, 5, 2, 12, 0))  # 30 days, read as UTC
    assert apply_decay([naive], NOW)[0].score == pytest.approx(0.25)


def test_jaccard() -> None:
    assert jaccard({"a", "b"}, {"b", "c"}) == pytest.approx(1 / 3)
    assert jaccard({"a"}, {"a"}) == 1.0
    assert jaccard(set(), {"a"}) == 0.0
    assert jaccard(set(), set()) == 0.0


def test_mmr_demotes_a_near_duplicate() -> None:
    items = [
        scored("tea", 0.90, text="User prefers green tea in the morning"),
        scored("tea-again", 0.88, text="User prefers green tea in the morning daily"),
        scored("db", 0.86, text="The project database is PostgreSQL 16"),
        scored("meeting", 0.50, text="Weekly sync moved to Friday"),
    ]
    reranked = mmr_rerank(items)
    assert [m.memory_id for m in reranked] == ["tea", "db", "tea-again", "meeting"]
    assert reranked[0].explain.mmr == pytest.approx(0.7 * 0.90)  # λ × its (absolute) relevance
    assert [m.score for m in reranked] == [0.90, 0.86, 0.88, 0.50]  # scores are kept


def test_mmr_with_lambda_one_is_pure_relevance() -> None:
    items = [scored("a", 0.9, text="x y"), scored("b", 0.8, text="x y"), scored("c", 0.1, text="z")]
    assert [m.memory_id for m in mmr_rerank(items, lambda_=1.0)] == ["a", "b", "c"]


def _mmr_by_definition(items: list[ScoredMemory], lambda_: float) -> list[tuple[str, float]]:
    """MMR as written: each pick maximises λ·rel − (1−λ)·max jaccard to the picks so far."""
    tokens = [mmr_tokens(item.text) for item in items]
    left, picks, out = list(range(len(items))), [], []
    while left:

        def value(i: int) -> float:
            similar = max((jaccard(tokens[i], tokens[p]) for p in picks), default=0.0)
            return lambda_ * min(1.0, max(0.0, items[i].score)) - (1 - lambda_) * similar

        best = max(left, key=lambda i: (value(i), items[i].score, -i))
        out.append((items[best].memory_id, value(best)))
        picks.append(best)
        left.remove(best)
    return out


def test_mmr_equals_its_definition_on_random_items() -> None:
    rng = random.Random(4)
    words = ["tea", "green", "db", "postgres", "sync", "friday", "deploy", "rollback", "vim"]
    for _ in range(200):
        items = [
            scored(
                f"m{i}",
                round(rng.random(), 2),
                text=" ".join(rng.sample(words, rng.randint(0, 5))),
            )
            for i in range(rng.randint(1, 12))
        ]
        lambda_ = rng.choice([0.0, 0.3, 0.7, 1.0])
        got = [(m.memory_id, m.explain.mmr) for m in mmr_rerank(items, lambda_=lambda_)]
        expected = _mmr_by_definition(items, lambda_)
        assert [m for m, _ in got] == [m for m, _ in expected]
        assert [v for _, v in got] == pytest.approx([v for _, v in expected])


def test_mmr_limit_and_edge_cases() -> None:
    items = [scored(str(i), 0.5, text=f"word{i}") for i in range(5)]
    assert [m.memory_id for m in mmr_rerank(items, limit=2)] == ["0", "1"]  # ties keep order
    assert mmr_rerank([], limit=3) == []
    with pytest.raises(ValueError):
        mmr_rerank(items, lambda_=1.5)


def test_mmr_compares_chinese_text() -> None:
    items = [
        scored("a", 0.9, text="用户喜欢喝绿茶"),
        scored("b", 0.89, text="用户喜欢喝绿茶和红茶"),
        scored("c", 0.88, text="项目使用 PostgreSQL 数据库"),
        scored("d", 0.1, text="无关"),
    ]
    assert [m.memory_id for m in mmr_rerank(items)][:2] == ["a", "c"]


def test_threshold_and_limit_after_mmr() -> None:
    items = [scored("a", 0.9), scored("b", 0.2), scored("c", 0.5), scored("d", 0.4)]
    assert [m.memory_id for m in threshold_and_limit(items, 0.35, 2)] == ["a", "c"]


def test_explain_as_dict() -> None:
    assert Explain(vector=0.5, text=0.25, decay=0.5, mmr=0.1).as_dict() == {
        "vector": 0.5,
        "text": 0.25,
        "decay": 0.5,
        "mmr": 0.1,
    }


def test_a_chunk_blends_its_whole_vector_with_its_best_passage() -> None:
    whole = {1: 0.3, 2: 0.5, 3: 0.8}
    best = {1: 0.9, 3: 0.4, 99: 1.0}  # 2: one passage; 99: not among the nearest chunks
    blended = with_best_passage(whole, best)
    assert blended == pytest.approx({1: 0.6, 2: 0.5, 3: 0.6})
    # The passage counts as much as the whole vector, whichever side is higher.
    assert with_best_passage({1: 0.2}, {1: 0.6})[1] == pytest.approx(0.4)
    assert with_best_passage({}, {1: 0.9}) == {}


def test_best_then_newest_orders_ties_by_observation_then_id() -> None:
    def at(mid: str, score: float, observed: datetime | None) -> ScoredMemory:
        return ScoredMemory(mid, f"{mid}#0", score, Explain(vector=score), observed_at=observed)

    three_days_ago = NOW - timedelta(days=3)
    items = [
        at("a", 0.5, three_days_ago),
        at("b", 0.9, NOW - timedelta(days=30)),
        at("c", 0.5, None),
        at("d", 0.5, datetime(2026, 5, 31, 12, 0)),  # as SQLite reads it back: no zone, UTC
        at("e", 0.5, three_days_ago),
    ]
    order = [m.memory_id for m in best_then_newest(items)]
    assert order == ["b", "d", "a", "e", "c"]
    assert [m.memory_id for m in best_then_newest(reversed(items))] == order
