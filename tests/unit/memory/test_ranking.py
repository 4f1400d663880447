"""Ranking before injection (docs/peers.md, OpenViking §5.6, postProcessMemories and pickMemoriesForInjection)."""

from __future__ import annotations

import copy
import math

import pytest

from app.memory.search.ranking import (
    MemoryItem,
    clamp_score,
    injection_rank,
    is_experience,
    lexical_overlap,
    pick_memories_for_injection,
    post_process_memories,
    query_tokens,
)


def memory(
    mid: str,
    score: float,
    *,
    category: str = "entities",
    abstract: str | None = None,
    level: int | None = 2,
) -> MemoryItem:
    item: MemoryItem = {
        "id": mid,
        "uri": f"viking://user/u1/memories/{category}/{mid}.md",
        "category": category,
        "title": mid,
        "abstract": abstract if abstract is not None else f"abstract of {mid}",
        "content": f"content of {mid}",
        "score": score,
    }
    if level is not None:
        item["level"] = level
    return item


def ids(items: list[MemoryItem]) -> list[str]:
    return [item["id"] for item in items]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.5, 0.5),
        (-1, 0.0),
        (2, 1.0),
        (None, 0.0),
        (math.nan, 0.0),
        ("0.9", 0.0),
        (True, 0.0),
        (math.inf, 1.0),
        (1, 1.0),
    ],
)
def test_clamp_score(value: object, expected: float) -> None:
    assert clamp_score(value) == expected


# postProcessMemories.


def test_post_process_sorts_by_clamped_score_and_applies_the_threshold() -> None:
    items = [memory("a", 0.2), memory("b", 1.7), memory("c", 0.1), memory("d", 0.6)]
    assert ids(post_process_memories(items, limit=10, score_threshold=0.15)) == ["b", "d", "a"]


def test_post_process_caps_at_the_limit() -> None:
    items = [memory(str(i), i / 10) for i in range(1, 10)]
    assert ids(post_process_memories(items, limit=3, score_threshold=0)) == ["9", "8", "7"]
    assert post_process_memories(items, limit=0, score_threshold=0) == []


def test_post_process_dedupes_by_category_and_normalised_abstract() -> None:
    items = [
        memory("a", 0.9, abstract="Prefers  Green tea"),
        memory("b", 0.8, abstract="prefers green tea "),
        memory("c", 0.7, category="preferences", abstract="Prefers green tea"),
    ]
    assert ids(post_process_memories(items, limit=10, score_threshold=0)) == ["a", "c"]


def test_post_process_dedupes_events_and_cases_by_uri() -> None:
    items = [
        memory("e1", 0.9, category="events", abstract="Team offsite"),
        memory("e2", 0.8, category="events", abstract="Team offsite"),
        memory("c1", 0.7, category="cases", abstract="Team offsite"),
    ]
    assert ids(post_process_memories(items, limit=10, score_threshold=0)) == ["e1", "e2", "c1"]
    duplicate = {**items[0], "id": "e1-again"}
    assert ids(post_process_memories([items[0], duplicate], limit=10, score_threshold=0)) == ["e1"]


def test_post_process_leaf_only_drops_directories() -> None:
    items = [memory("leaf", 0.5), memory("dir", 0.9, level=1), memory("nolevel", 0.4, level=None)]
    kept = post_process_memories(items, limit=10, score_threshold=0, leaf_only=True)
    assert ids(kept) == ["leaf", "nolevel"]


# pickMemoriesForInjection.


def test_leaf_boost_applies_to_level_2_only() -> None:
    assert injection_rank(memory("a", 0.5, abstract=""), "zzz") == pytest.approx(0.62)
    assert injection_rank(memory("a", 0.5, abstract="", level=None), "zzz") == pytest.approx(0.5)


def test_temporal_query_boosts_events() -> None:
    event = memory("moved", 0.5, category="events", abstract="", level=None)
    assert injection_rank(event, "yesterday's plans") == pytest.approx(0.6)
    assert injection_rank(event, "plans") == pytest.approx(0.5)
    assert (
        injection_rank(memory("e", 0.5, category="entities", abstract="", level=None), "yesterday")
        == 0.5
    )


def test_preference_query_boosts_preferences() -> None:
    pref = memory("tea", 0.5, category="preferences", abstract="", level=None)
    assert injection_rank(pref, "我喜欢什么饮料") == pytest.approx(0.58)
    assert injection_rank(pref, "favourite drink") == pytest.approx(0.58)
    assert injection_rank(pref, "drink") == pytest.approx(0.5)


def test_query_tokens_drop_stopwords_and_short_tokens() -> None:
    assert query_tokens("What is the PostgreSQL port for a DB?") == ["postgresql", "port", "db"]


def test_lexical_overlap_is_proportional_and_capped() -> None:
    item = memory("x", 0.5, abstract="Uses PostgreSQL on port 5433")
    assert lexical_overlap(query_tokens("postgresql backup schedule"), item) == pytest.approx(
        0.2 / 3
    )
    many = query_tokens("postgresql port uses 5433 alpha beta")
    assert lexical_overlap(many, item) == pytest.approx(0.2)
    assert lexical_overlap([], item) == 0.0


def test_lexical_overlap_also_reads_the_uri() -> None:
    item = memory("deploy-notes", 0.5, abstract="nothing related")
    assert lexical_overlap(["deploy"], item) == pytest.approx(0.2)


def test_pick_reorders_by_rank_and_dedupes_by_abstract() -> None:
    items = [
        memory("a", 0.70, abstract="Works at Acme"),
        memory("b", 0.65, abstract="Prefers green tea", category="preferences"),
        memory("c", 0.60, abstract="works at acme "),
    ]
    picked = pick_memories_for_injection(items, limit=5, query="what tea do I like")
    assert ids(picked) == ["b", "a"]


def test_pick_prefers_leaves_when_enough() -> None:
    items = [memory("dir", 0.99, level=1), memory("l1", 0.3), memory("l2", 0.2)]
    assert ids(pick_memories_for_injection(items, limit=2, query="x")) == ["l1", "l2"]


def test_pick_fills_with_non_leaves_above_the_threshold() -> None:
    items = [memory("dir-hi", 0.9, level=1), memory("dir-lo", 0.1, level=1), memory("l1", 0.3)]
    picked = pick_memories_for_injection(items, limit=3, query="x", threshold=0.15)
    assert ids(picked) == ["l1", "dir-hi"]


def test_pick_does_not_mutate_scores() -> None:
    items = [memory("a", 0.4), memory("b", 0.35, category="events")]
    before = copy.deepcopy(items)
    picked = pick_memories_for_injection(items, limit=2, query="when was the meeting")
    assert items == before
    assert picked[0] is items[1] and picked[1] is items[0]


def test_is_experience_by_category_or_uri() -> None:
    assert is_experience({"category": "experiences"})
    assert is_experience({"category": "Experience"})
    assert is_experience({"uri": "viking://agent/a/memories/experiences/x.md"})
    assert not is_experience(memory("p", 0.5, category="profile"))
