"""Ranked archive search (issue 10): per-session statistics, the host's time, time filters,
neighbours, relative dates and the vector side computed in Phase 2."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx

from tests.api.test_archives import archive, message_hits, search
from tests.conftest import app_client
from tests.helpers.messages import assistant, user

MAY_8 = int(datetime(2023, 5, 8, 10, 0, tzinfo=UTC).timestamp() * 1000)
HOUR = 3_600_000


def said(text: str, at_ms: int, role: str = "user") -> dict[str, Any]:
    return {**(user(text) if role == "user" else assistant(text)), "timestamp": at_ms}


def ranking(result: dict[str, Any]) -> list[tuple[int, float]]:
    return [(h["seq"], h["score"]) for h in message_hits(result)]


async def test_a_sessions_ranking_ignores_other_sessions_and_tenants(make_settings: Any) -> None:
    mine = [user("the cache eviction policy is LRU"), user("cache warmup runs nightly"),
            user("eviction notices went out"), user("lunch was good"), user("cache cache cache sizes")]
    crowd = [user(f"cache eviction storm number {i}, eviction everywhere") for i in range(40)]
    settings = make_settings(api_keys="ka:tenant-a,kb:tenant-b")
    a, b = {"Authorization": "Bearer ka"}, {"Authorization": "Bearer kb"}
    async with app_client(settings) as client:
        await archive(client, "mine", mine, headers=a)
        query = {"sessionId": "mine", "query": "cache eviction", "mode": "ranked"}
        before = (await client.post("/archives/search", json=query, headers=a)).json()
        await archive(client, "neighbour", crowd, headers=a)
        await archive(client, "mine", crowd, headers=b)  # same session id, another tenant
        after = (await client.post("/archives/search", json=query, headers=a)).json()
    assert ranking(before) and ranking(before) == ranking(after)
    assert ranking(before)[0][0] == 1  # the message with both words leads


async def test_hits_carry_the_hosts_time_and_filter_by_it(client: httpx.AsyncClient) -> None:
    await archive(client, "s-time", [
        said("the router firmware was upgraded", MAY_8),
        said("we rolled the router back", MAY_8 + 24 * HOUR, "assistant"),
        said("router is stable again", MAY_8 + 48 * HOUR),
    ])
    for mode in ("keyword", "ranked", "regex"):
        hits = message_hits(await search(client, "s-time", "router", mode=mode))
        times = {h["seq"]: h["timestamp"] for h in hits}
        assert times == {1: "2023-05-08T10:00:00.000Z", 2: "2023-05-09T10:00:00.000Z", 3: "2023-05-10T10:00:00.000Z"}, mode
        narrowed = await search(client, "s-time", "router", mode=mode, since="2023-05-09T00:00:00Z",
                                until="2023-05-09T23:59:59Z")
        assert [h["seq"] for h in message_hits(narrowed)] == [2], mode


async def test_context_returns_neighbouring_turns(client: httpx.AsyncClient) -> None:
    await archive(client, "s-ctx", [user(f"turn {i} filler") for i in range(1, 4)] + [user("the needle is here")]
                  + [user(f"turn {i} filler") for i in range(5, 8)])
    hit = message_hits(await search(client, "s-ctx", "needle", context=2))[0]
    assert hit["seq"] == 4
    assert [n["seq"] for n in hit["context"]] == [2, 3, 5, 6]
    assert hit["context"][0]["text"] == "turn 2 filler" and hit["context"][0]["timestamp"]
    assert message_hits(await search(client, "s-ctx", "needle"))[0].get("context") is None


async def test_relative_dates_are_found_by_the_day_they_meant(client: httpx.AsyncClient) -> None:
    await archive(client, "s-date", [
        said("Caroline: yesterday I went camping by the lake", MAY_8),
        said("Melanie: nice, I stayed home", MAY_8 + HOUR),
        said("Caroline: on 2 May 2023 I painted the fence", MAY_8 + 2 * HOUR),
    ])
    hits = message_hits(await search(client, "s-date", "What did Caroline do on 7 May 2023?", mode="ranked"))
    assert hits and hits[0]["seq"] == 1
    written = message_hits(await search(client, "s-date", "what happened on 2023-05-02", mode="ranked"))
    assert written and written[0]["seq"] == 3


async def test_speaker_names_are_not_evidence(client: httpx.AsyncClient) -> None:
    await archive(client, "s-speaker", [user(f"Caroline: small talk number {i}") for i in range(8)]
                  + [user("Melanie: Caroline adopted a corgi puppy")])
    hits = message_hits(await search(client, "s-speaker", "caroline", mode="ranked"))
    assert [h["seq"] for h in hits] == [9]


async def test_phase2_vectors_find_a_paraphrase(make_settings: Any) -> None:
    async with app_client(make_settings(embedding={"provider": "local"})) as client:
        await archive(client, "s-vec", [
            user("Caroline: after a long shift I relax with pottery, it clears my head"),
            user("Melanie: the traffic was terrible this morning"),
            user("Caroline: my brother is moving to another city"),
            user("Melanie: we had friends over for dinner on Friday"),
        ])
        result = await search(client, "s-vec", "How does she unwind once work is over?", mode="ranked")
        lexical = await search(client, "s-vec", "How does she unwind once work is over?", mode="keyword")
    assert result["retrieval"] == "hybrid"
    assert message_hits(result)[0]["seq"] == 1
    assert all(h["seq"] != 1 for h in message_hits(lexical))  # no shared word: only the vector finds it
