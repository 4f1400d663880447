"""The recall cache through the HTTP API: the same tool-loop request is answered again from the
cache, and any change to the user's memories or the agent's experiences, by any path, drops the
kept answer at once (docs/recall.md, Recall cache)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy import text

from app.db.engine import create_db_engine
from app.settings import Settings
from tests.conftest import app_client
from tests.helpers.messages import user
from tests.helpers.stub_embeddings import StubEmbeddings

QUERY = "where is the billing runbook kept?"


async def tool_loop(client: httpx.AsyncClient, query: str = QUERY, **headers: str) -> Any:
    body = {"sessionId": "s", "messages": [user(query, timestamp=1_760_000_000_000)]}
    response = await client.post("/assemble", json=body, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


def cached(answer: Any) -> bool:
    return answer["diagnostics"].get("recall", {}).get("cached") is True


def injected(answer: Any) -> str:
    return str(answer["messages"][-1]["content"])


async def add(client: httpx.AsyncClient, content: str, **headers: str) -> dict[str, Any]:
    response = await client.post(
        "/memories", json={"content": content, "category": "entities"}, headers=headers
    )
    assert response.status_code == 200, response.text
    return dict(response.json()["memory"])


@pytest.fixture
def settings(make_settings: Any) -> Settings:
    return make_settings(recall={"experience_enabled": True})


async def test_a_repeated_request_is_served_from_the_cache(settings: Settings) -> None:
    async with app_client(settings) as client:
        await add(client, "The billing runbook is kept in notion page 42")
        first = await tool_loop(client)
        again = await tool_loop(client)
        other_query = await tool_loop(client, "where is the deploy runbook for billing kept?")
    assert not cached(first) and cached(again) and not cached(other_query)
    assert "notion page 42" in injected(first)
    assert again["messages"] == first["messages"]
    # The memory side is what is kept; the archive side is searched for every request.
    kept = [k for k in first["diagnostics"]["recall"] if k != "archive"]
    assert {k: again["diagnostics"]["recall"][k] for k in kept} == {
        k: first["diagnostics"]["recall"][k] for k in kept
    }


async def test_every_change_to_the_users_memories_drops_the_kept_answer(
    settings: Settings,
) -> None:
    async with app_client(settings) as client:
        memory = await add(client, "The billing runbook is kept in notion page 42")
        await tool_loop(client)
        assert cached(await tool_loop(client))

        await add(client, "The billing runbook has a copy on the wiki under ops/billing")
        added = await tool_loop(client)
        assert not cached(added) and "ops/billing" in injected(added)
        assert cached(await tool_loop(client))

        patched = await client.patch(
            f"/memories/{memory['id']}",
            json={"content": "The billing runbook is kept in notion page 77"},
        )
        assert patched.status_code == 200, patched.text
        edited = await tool_loop(client)
        assert not cached(edited) and "page 77" in injected(edited)
        assert "page 42" not in injected(edited)

        assert (await client.delete(f"/memories/{memory['id']}")).status_code == 200
        deleted = await tool_loop(client)
        assert not cached(deleted) and "page 77" not in injected(deleted)
        assert "ops/billing" in injected(deleted)


async def test_a_change_written_outside_the_service_drops_the_kept_answer(
    settings: Settings,
) -> None:
    """The generations are kept by the database: a write by another replica, a copy or a hand
    edit counts like one through the API."""
    async with app_client(settings) as client:
        memory = await add(client, "The billing runbook is kept in notion page 42")
        await tool_loop(client)
        assert cached(await tool_loop(client))
        engine = create_db_engine(settings)
        try:
            with engine.begin() as conn:
                conn.execute(
                    text("UPDATE memories SET superseded_by = id WHERE id = :id"),
                    {"id": memory["id"]},
                )
        finally:
            engine.dispose()
        after = await tool_loop(client)
    assert not cached(after)
    assert "page 42" not in str(after["messages"])


async def test_other_owners_changes_keep_the_answer_and_experiences_drop_it(
    settings: Settings,
) -> None:
    async with app_client(settings) as client:
        await add(client, "The billing runbook is kept in notion page 42", **{"X-User-Id": "u1"})
        await tool_loop(client, **{"X-User-Id": "u1"})
        await add(client, "Bob keeps his runbooks on paper", **{"X-User-Id": "u2"})
        assert cached(await tool_loop(client, **{"X-User-Id": "u1"}))

        experience = await client.post(
            "/memories",
            json={
                "category": "experiences",
                "title": "billing runbook lookup",
                "content": "## Situation\n- looking for the billing runbook\n## Approach\n"
                "- search notion first\n## Reflect\n- the wiki copy can be stale",
            },
            headers={"X-User-Id": "u1"},
        )
        assert experience.status_code == 200, experience.text
        after = await tool_loop(client, **{"X-User-Id": "u1"})
    assert not cached(after)


async def test_the_cache_can_be_switched_off(make_settings: Any) -> None:
    async with app_client(make_settings(recall={"cache_ttl_s": 0})) as client:
        await add(client, "The billing runbook is kept in notion page 42")
        answers = [await tool_loop(client) for _ in range(3)]
    assert not any(cached(a) for a in answers)
    assert all("notion page 42" in injected(a) for a in answers)


async def test_an_answer_without_vectors_is_not_kept(make_settings: Any) -> None:
    """The embedder failing degrades recall to keywords; that answer is not served again, so the
    call after the embedder recovers searches with vectors."""
    stub = StubEmbeddings()
    embedding = {"provider": "openai", "base_url": stub.start(), "model": "stub-embed"}
    try:
        async with app_client(make_settings(embedding=embedding)) as client:
            await add(client, "The billing runbook is kept in notion page 42")
            stub.fail_with = 400
            degraded = [await tool_loop(client) for _ in range(2)]
            stub.fail_with = None
            recovered = [await tool_loop(client) for _ in range(2)]
    finally:
        stub.stop()
    modes = [a["diagnostics"]["recall"]["longTerm"]["mode"] for a in degraded + recovered]
    assert modes == ["bm25", "bm25", "hybrid", "hybrid"]
    assert [cached(a) for a in degraded + recovered] == [False, False, False, True]


async def test_owners_without_memories_are_answered_without_a_search_or_an_embedding(
    make_settings: Any,
) -> None:
    """Nothing was ever stored for the user or the agent (the embedded default without an LLM
    extracts none): recall says so at once, with the diagnostics of a search that found nothing;
    the first memory stored is found by the next request."""
    stub = StubEmbeddings()
    embedding = {"provider": "openai", "base_url": stub.start(), "model": "stub-embed"}
    try:
        async with app_client(make_settings(embedding=embedding)) as client:
            empty = await tool_loop(client)
            calls_before_any_memory = stub.calls
            await add(client, "The billing runbook is kept in notion page 42")
            found = await tool_loop(client)
    finally:
        stub.stop()
    assert calls_before_any_memory == 0
    recall = empty["diagnostics"]["recall"]
    assert recall["longTerm"] == {"hits": 0, "mode": "hybrid"}
    assert recall["experience"]["hits"] == 0
    assert empty["diagnostics"]["reason"] == "no_recall_hits"
    assert "notion page 42" in injected(found) and stub.calls > calls_before_any_memory
