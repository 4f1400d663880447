"""HistoryCache: exact versions, least recently used first out, bounded by size."""

from __future__ import annotations

from app.assembly.history_cache import HistoryCache


def test_a_value_is_returned_for_its_own_version_only():
    cache: HistoryCache[str] = HistoryCache(100)
    cache.put(("t", "s"), (1, 2), "v1", 10)
    assert cache.get(("t", "s"), (1, 2)) == "v1"
    assert cache.get(("t", "s"), (1, 3)) is None
    assert cache.get(("t", "other"), (1, 2)) is None
    assert cache.get(("u", "s"), (1, 2)) is None
    assert (cache.hits, cache.misses) == (1, 3)


def test_a_new_version_replaces_the_old_one_and_its_size():
    cache: HistoryCache[str] = HistoryCache(100)
    cache.put(("t", "s"), 1, "old", 60)
    cache.put(("t", "s"), 2, "new", 30)
    assert cache.get(("t", "s"), 1) is None
    assert cache.get(("t", "s"), 2) == "new"
    assert (len(cache), cache.chars) == (1, 30)


def test_the_least_recently_used_sessions_go_first_past_the_bound():
    cache: HistoryCache[str] = HistoryCache(100)
    for name in "abc":
        cache.put(("t", name), 0, name, 30)
    assert cache.get(("t", "a"), 0) == "a"  # now the most recently used
    cache.put(("t", "d"), 0, "d", 30)  # 120 > 100: "b" goes
    assert [cache.get(("t", n), 0) for n in "abcd"] == ["a", None, "c", "d"]
    assert cache.chars == 90


def test_a_value_larger_than_the_bound_is_not_kept_and_evicts_nothing():
    cache: HistoryCache[str] = HistoryCache(100)
    cache.put(("t", "a"), 0, "a", 50)
    cache.put(("t", "huge"), 0, "huge", 101)
    assert cache.get(("t", "huge"), 0) is None
    assert cache.get(("t", "a"), 0) == "a"
    assert cache.chars == 50
