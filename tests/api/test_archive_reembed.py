"""After a change of embedding model, ranked archive search compares the query only with archived
messages embedded by the same model (the others are found by their words) until ``reembed`` gives
them the new model's vectors; re-embedding replaces vectors and counts nothing twice."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from sqlalchemy import text

from app.archives.index.reembed import count_stale_messages, reembed_stale_messages
from app.commands.runtime import memory_service
from app.db.engine import create_db_engine
from app.db.uow import UnitOfWork
from app.settings import Settings
from tests.api.test_archives import archive, message_hits, search
from tests.conftest import app_client
from tests.helpers.messages import user
from tests.helpers.stub_embeddings import DIMENSIONS, StubEmbeddings

QUESTION = "How does she unwind once work is over?"
TARGET = "after a long shift I relax with pottery, it clears my head"
MESSAGES = [
    user("the traffic was terrible this morning"),
    user(TARGET),
    user("my brother is moving to another city. We had friends over for dinner on Friday."),
    user("she finished the report before lunch"),
]


def toward_question(cosine: float, axis: int) -> list[float]:
    vector = [0.0] * DIMENSIONS
    vector[0], vector[axis] = cosine, math.sqrt(1 - cosine * cosine)
    return vector


def settings_for(make_settings: Callable[..., Settings], base_url: str, model: str) -> Settings:
    # The stub answers every model with the same vectors: only the recorded model's name tells
    # the two spaces apart, as after a switch between two providers' models.
    return make_settings(embedding={"provider": "openai", "base_url": base_url, "model": model})


async def ranked(settings: Settings) -> tuple[str, list[int]]:
    async with app_client(settings) as client:
        result = await search(client, "s-models", QUESTION, mode="ranked")
    return result["retrieval"], [h["seq"] for h in message_hits(result)]


def index_state(settings: Settings) -> dict[str, Any]:
    engine = create_db_engine(settings)
    try:
        with engine.connect() as conn:
            return {
                "models": sorted(
                    str(m)
                    for (m,) in conn.execute(text("SELECT embedding_model FROM message_search"))
                ),
                "stats": conn.execute(
                    text("SELECT documents, total_chars FROM session_search_stats")
                ).all(),
                "terms": sorted(
                    conn.execute(text("SELECT term, documents FROM session_terms")).all()
                ),
                "passages": conn.execute(
                    text("SELECT vector_passages FROM message_search ORDER BY message_id")
                ).all(),
            }
    finally:
        engine.dispose()


async def test_a_model_change_keeps_vector_spaces_apart_until_reembed(
    make_settings: Callable[..., Settings],
) -> None:
    stub = StubEmbeddings()
    stub.chosen = {QUESTION: toward_question(1.0, 1), TARGET: toward_question(0.9, 2)}
    base_url = stub.start()
    first = settings_for(make_settings, base_url, "stub-a")
    second = settings_for(make_settings, base_url, "stub-b")
    uow = UnitOfWork(create_db_engine(second))
    try:
        async with app_client(first) as client:
            await archive(client, "s-models", MESSAGES)
        indexed = index_state(first)
        # No word of the question is in the target: only its vector puts it first.
        retrieval, seqs = await ranked(first)
        assert retrieval == "hybrid" and seqs[0] == 2, seqs

        retrieval, seqs = await ranked(second)
        assert retrieval == "hybrid" and 2 not in seqs  # stub-a's vectors are not compared
        assert count_stale_messages(uow, "stub-b") == len(MESSAGES)

        stub.fail_with = 500
        async with memory_service(second, uow) as service:
            assert service.embedder is not None
            failed = await reembed_stale_messages(
                uow, service.embedder.embed_passages, "stub-b", batch=2
            )
            assert (failed.done, failed.failed) == (0, True)
            assert index_state(second) == indexed  # nothing written by a failed run

            stub.fail_with = None
            done = await reembed_stale_messages(
                uow, service.embedder.embed_passages, "stub-b", batch=3
            )
        assert (done.done, done.failed) == (len(MESSAGES), False)
        assert count_stale_messages(uow, "stub-b") == 0
        retrieval, seqs = await ranked(second)
        assert retrieval == "hybrid" and seqs[0] == 2, seqs
        assert 2 not in (await ranked(first))[1]  # and now the old model's query finds nothing
        after = index_state(second)
    finally:
        uow.engine.dispose()
        stub.stop()
    assert after["models"] == ["stub-b"] * len(MESSAGES)
    # Vectors and passages replaced, the session's statistics not counted twice.
    assert {k: v for k, v in after.items() if k != "models"} == {
        k: v for k, v in indexed.items() if k != "models"
    }
    assert indexed["passages"] == [(0,), (0,), (2,), (0,)]
