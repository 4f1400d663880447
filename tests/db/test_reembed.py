"""Changing the embedding model re-embeds stale memories; vector spaces are never mixed."""

from __future__ import annotations

import pysqlite3.dbapi2 as sqlite

from app.db.engine import create_db_engine
from app.db.uow import UnitOfWork
from app.memory.admin.reembed import reembed_stale
from app.memory.search.hybrid import SearchInput, search_memories
from app.memory.service import Caller, MemoryService, NewMemory
from app.memory.store.embedding_cache import CachedEmbedder
from app.providers.fake_embeddings import FakeEmbedder


def other_model() -> FakeEmbedder:
    embedder = FakeEmbedder(dimensions=384)
    embedder.model_id = "other-model-384"  # type: ignore[misc]
    return embedder


async def test_memories_of_another_model_are_re_embedded(settings, db_path):
    uow = UnitOfWork(create_db_engine(settings))
    first = MemoryService(uow, CachedEmbedder(uow, FakeEmbedder(dimensions=384)))
    caller = Caller("default")
    for text in (
        "green tea in the afternoon",
        "db-prod-7 is the primary",
        "deploys happen on Fridays. Rollbacks need a second approver.",
    ):
        assert (
            await first.commit_memory(caller, NewMemory(content=text, category="entities"))
        ).action == "ADD"
    keyword_only = MemoryService(uow, None)
    assert (
        await keyword_only.commit_memory(
            caller, NewMemory(content="no vector yet", category="entities")
        )
    ).action == "ADD"
    second = MemoryService(uow, CachedEmbedder(uow, other_model()))
    assert await reembed_stale(second) == 4
    assert await reembed_stale(second) == 0
    conn = sqlite.connect(str(db_path))
    models = {r[0] for r in conn.execute("SELECT embedding_model FROM memories")}
    chunk_models = {r[0] for r in conn.execute("SELECT embedding_model FROM memory_chunks")}
    passages = conn.execute(
        "SELECT c.embedding_model, count(*) FROM memory_passage_vectors p "
        "JOIN memory_chunks c ON c.id = p.chunk_id GROUP BY c.embedding_model"
    ).fetchall()
    conn.close()
    assert models == {"other-model-384"} and chunk_models == {"other-model-384"}
    # The two-sentence memory's passages were embedded again with the new model's chunks.
    assert passages == [("other-model-384", 2)]


async def test_vectors_of_another_model_are_not_compared_until_reembedded(settings):
    """A model change never mixes vector spaces: the new model's query is not compared with the
    old model's vectors (only words find those memories) until ``reembed`` has run."""
    uow = UnitOfWork(create_db_engine(settings))
    caller = Caller("default")
    first = MemoryService(uow, CachedEmbedder(uow, FakeEmbedder(dimensions=384)))
    added = await first.commit_memory(
        caller, NewMemory(content="green tea in the afternoon", category="entities")
    )
    assert added.action == "ADD" and added.memory is not None
    query = SearchInput("green tea in the afternoon", mode="vector")
    # The same vectors under another name: only the recorded model tells the spaces apart.
    second = MemoryService(uow, CachedEmbedder(uow, other_model()))

    async def found(service: MemoryService) -> list[str]:
        return [hit.record.id for hit in (await search_memories(service, caller, query)).results]

    assert await found(first) == [added.memory.id]
    assert await found(second) == []
    keyword = await search_memories(second, caller, SearchInput("green tea", mode="bm25"))
    assert [hit.record.id for hit in keyword.results] == [added.memory.id]
    assert await reembed_stale(second) == 1
    assert await found(second) == [added.memory.id]
    uow.engine.dispose()
