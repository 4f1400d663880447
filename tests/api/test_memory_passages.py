"""Memory search scores a chunk by its whole vector and its best passage (app/search/text/passages.py),
through HTTP: a fact told in one sentence of a long memory comes first when only that sentence is
near the question (vectors chosen through a stub embedding endpoint), and a memory's passage
vectors, written with the bundled local model, are replaced and removed with its chunks."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from app.db.engine import create_db_engine
from app.search.text.passages import message_passages
from app.settings import Settings
from tests.conftest import app_client
from tests.helpers.stub_embeddings import DIMENSIONS, StubEmbeddings

QUESTION = "What does she do to de-stress after her job?"
FOUND_BY = "After a long shift I relax with pottery, it clears my head."
BURIED = (
    "Morning, the weather finally turned and the garden looks great. Did you see the match last "
    f"night, that last goal was unbelievable. The bus was late again so I walked most of the way. "
    f"{FOUND_BY} My sister sends her love and says the twins started school. We are repainting "
    "the hallway this weekend. The new phone I bought keeps dropping calls."
)
NEAR_MISSES = [
    "She finishes work at six most days.",
    "She asked how my shift went yesterday.",
    "The office party is next Friday.",
    "She reads a book on the train home.",
]


def toward_question(cosine: float, axis: int) -> list[float]:
    """A unit vector at this cosine to the question's (axis 0), the rest along ``axis``."""
    vector = [0.0] * DIMENSIONS
    vector[0], vector[axis] = cosine, math.sqrt(1 - cosine * cosine)
    return vector


def chosen_vectors() -> dict[str, list[float]]:
    """The long memory's whole vector far from the question (0.3), one of its sentences near it
    (0.9), the short memories between (0.5): only its best passage puts it first (0.6)."""
    passages = message_passages(BURIED)
    assert FOUND_BY in passages
    vectors = {QUESTION: toward_question(1.0, 1), BURIED: toward_question(0.3, 2)}
    for axis, passage in enumerate(passages, start=10):
        vectors[passage] = toward_question(0.9 if passage == FOUND_BY else 0.1, axis)
    for axis, content in enumerate(NEAR_MISSES, start=50):
        vectors[content] = toward_question(0.5, axis)
    return vectors


@pytest.fixture
def settings(make_settings: Callable[..., Settings]) -> Settings:
    return make_settings(embedding={"provider": "local"})


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(settings) as c:
        yield c


async def add(client: httpx.AsyncClient, content: str) -> dict[str, Any]:
    response = await client.post("/memories", json={"content": content, "category": "events"})
    assert response.status_code == 200, response.text
    assert response.json()["action"] == "ADD", response.text
    return dict(response.json()["memory"])


def passage_counts(settings: Settings) -> dict[str, int]:
    """Each memory's passage vectors, counted in the database."""
    engine = create_db_engine(settings)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT c.memory_id, count(p.chunk_id) FROM memory_chunks c "
                    "LEFT JOIN memory_passage_vectors p ON p.chunk_id = c.id GROUP BY c.memory_id"
                )
            ).all()
            orphans = conn.execute(
                text(
                    "SELECT count(*) FROM memory_passage_vectors p WHERE NOT EXISTS "
                    "(SELECT 1 FROM memory_chunks c WHERE c.id = p.chunk_id)"
                )
            ).scalar_one()
    finally:
        engine.dispose()
    assert orphans == 0
    return {str(memory_id): int(count) for memory_id, count in rows}


@pytest.mark.parametrize("mode", ["hybrid", "vector"])
async def test_a_sentence_buried_in_a_long_memory_is_found_by_its_passage(
    make_settings: Callable[..., Settings], mode: str
) -> None:
    stub = StubEmbeddings()
    stub.chosen = chosen_vectors()
    embedding = {"provider": "openai", "base_url": stub.start(), "model": "stub-embed"}
    try:
        async with app_client(make_settings(embedding=embedding)) as client:
            for content in NEAR_MISSES[:2]:
                await add(client, content)
            buried = await add(client, BURIED)
            for content in NEAR_MISSES[2:]:
                await add(client, content)
            response = await client.post(
                "/memories/search", json={"query": QUESTION, "mode": mode, "explain": True}
            )
    finally:
        stub.stop()
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["mode"] == mode
    ranked = [(h["content"][:30], h["explain"]["vector"]) for h in body["results"]]
    assert body["results"][0]["id"] == buried["id"], ranked
    assert body["results"][0]["explain"]["vector"] == pytest.approx(0.6, abs=1e-6), ranked
    assert body["results"][1]["explain"]["vector"] == pytest.approx(0.5, abs=1e-6), ranked


async def test_passage_vectors_follow_their_memory(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    long = await add(client, BURIED)
    short = await add(client, "The user's cat is named Miso.")
    assert passage_counts(settings) == {long["id"]: 7, short["id"]: 0}

    edited = await client.patch(
        f"/memories/{long['id']}",
        json={"version": long["version"], "content": "Pottery on Mondays. Chess on Fridays."},
    )
    assert edited.status_code == 200, edited.text
    assert passage_counts(settings) == {long["id"]: 2, short["id"]: 0}

    deleted = await client.delete(f"/memories/{long['id']}")
    assert deleted.status_code == 200, deleted.text
    assert passage_counts(settings) == {short["id"]: 0}
