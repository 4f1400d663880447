"""The recall cache's rules (app/memory/recall/cache.py): served while the generations match and
the entry is fresh, keyed by everything that shapes an answer, least recently used dropped."""

from __future__ import annotations

from app.core.recall import RecallBlock, RecallRequest
from app.memory.recall.cache import RecallCache, recall_key

BLOCK = RecallBlock("<openviking-context>x</openviking-context>", {"longTerm": {"hits": 1}})


def request(**changes: object) -> RecallRequest:
    fields: dict[str, object] = {
        "tenant_id": "t",
        "user_id": "u",
        "agent_id": "a",
        "query": "where is the runbook?",
        "is_cron": False,
        "options": {"recallLimit": 3},
    }
    return RecallRequest(**{**fields, **changes})  # type: ignore[arg-type]


def test_served_while_the_generations_match_and_fresh() -> None:
    cache = RecallCache(ttl_s=10)
    key = recall_key(request())
    cache.put(key, (3, 1), now=100.0, block=BLOCK)
    assert cache.get(key, (3, 1), now=109.9) == (True, BLOCK)


def test_an_empty_answer_is_kept_too() -> None:
    cache = RecallCache(ttl_s=10)
    key = recall_key(request())
    cache.put(key, (0, 0), now=0.0, block=None)
    assert cache.get(key, (0, 0), now=1.0) == (True, None)


def test_a_moved_generation_drops_the_entry() -> None:
    for moved in ((4, 1), (3, 2), (2, 1)):
        cache = RecallCache(ttl_s=10)
        key = recall_key(request())
        cache.put(key, (3, 1), now=0.0, block=BLOCK)
        assert cache.get(key, moved, now=1.0) == (False, None)
        assert len(cache) == 0
        assert cache.get(key, (3, 1), now=1.0) == (False, None)


def test_an_entry_lives_for_the_time_to_live_only() -> None:
    cache = RecallCache(ttl_s=10)
    key = recall_key(request())
    cache.put(key, (1, 1), now=100.0, block=BLOCK)
    assert cache.get(key, (1, 1), now=110.0) == (False, None)
    assert len(cache) == 0


def test_every_field_of_the_request_is_in_the_key() -> None:
    base = recall_key(request())
    changed = [
        request(tenant_id="t2"),
        request(user_id="u2"),
        request(agent_id="a2"),
        request(query="where is the runbook"),
        request(is_cron=True),
        request(options={"recallLimit": 4}),
        request(options={}),
    ]
    keys = {recall_key(r) for r in changed}
    assert base not in keys and len(keys) == len(changed)
    assert recall_key(request(options={"b": 1, "a": 2})) == recall_key(
        request(options={"a": 2, "b": 1})
    )


def test_the_least_recently_used_entry_goes_first() -> None:
    cache = RecallCache(ttl_s=10, max_entries=2)
    first, second, third = (recall_key(request(query=f"query {i}")) for i in range(3))
    cache.put(first, (1,), now=0.0, block=BLOCK)
    cache.put(second, (1,), now=0.0, block=BLOCK)
    assert cache.get(first, (1,), now=0.0)[0]  # first is now the most recently used
    cache.put(third, (1,), now=0.0, block=BLOCK)
    assert len(cache) == 2
    assert cache.get(second, (1,), now=0.0) == (False, None)
    assert cache.get(first, (1,), now=0.0)[0] and cache.get(third, (1,), now=0.0)[0]
