"""CachedEmbedder: a query is embedded once however many callers ask for it at the same time, and
a caller that stops waiting does not stop the embedding (its vector still reaches the cache)."""

from __future__ import annotations

import asyncio

import pytest

from app.core.rules.tokens import estimate_text_tokens
from app.db.engine import create_db_engine
from app.db.uow import UnitOfWork
from app.memory.store.embedding_cache import QUERY_MAX_TOKENS, CachedEmbedder
from app.providers.fake_embeddings import FakeEmbedder
from app.providers.protocols import ProviderError
from app.settings import Settings


class HeldEmbedder(FakeEmbedder):
    """Embeds queries only once released; may fail instead."""

    def __init__(self) -> None:
        super().__init__(dimensions=8)
        self.release = asyncio.Event()
        self.fail = False

    async def embed_queries(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        await self.release.wait()
        if self.fail:
            raise ProviderError("provider down")
        return [self.vector(text) for text in texts]


def _cached(settings: Settings, embedder: HeldEmbedder) -> CachedEmbedder:
    return CachedEmbedder(UnitOfWork(create_db_engine(settings)), embedder)


async def test_concurrent_callers_of_one_query_share_one_embedding(settings: Settings) -> None:
    embedder = HeldEmbedder()
    cached = _cached(settings, embedder)
    waiting = [asyncio.ensure_future(cached.embed_query("deploy failed")) for _ in range(3)]
    await asyncio.sleep(0.05)
    embedder.release.set()
    vectors = await asyncio.gather(*waiting)
    assert embedder.calls == [["deploy failed"]]
    assert vectors == [embedder.vector("deploy failed")] * 3


async def test_a_caller_that_times_out_leaves_the_vector_to_the_cache(settings: Settings) -> None:
    embedder = HeldEmbedder()
    cached = _cached(settings, embedder)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(cached.embed_query("rollback"), 0.05)
    embedder.release.set()
    assert await cached.embed_query("rollback") == embedder.vector("rollback")
    assert embedder.calls == [["rollback"]]  # the second call joined the first's embedding
    assert await cached.embed_query("rollback") == embedder.vector("rollback")
    assert embedder.calls == [["rollback"]]  # and later calls read the cache


async def test_a_failure_reaches_every_waiting_caller_and_the_next_call_tries_again(
    settings: Settings,
) -> None:
    embedder = HeldEmbedder()
    embedder.fail = True
    cached = _cached(settings, embedder)
    waiting = [asyncio.ensure_future(cached.embed_query("kafka")) for _ in range(2)]
    await asyncio.sleep(0.05)
    embedder.release.set()
    results = await asyncio.gather(*waiting, return_exceptions=True)
    assert [type(r) for r in results] == [ProviderError, ProviderError]
    embedder.fail = False
    assert await cached.embed_query("kafka") == embedder.vector("kafka")
    assert embedder.calls == [["kafka"], ["kafka"]]


async def test_a_long_query_is_cut_to_what_the_model_reads(settings: Settings) -> None:
    embedder = HeldEmbedder()
    embedder.release.set()
    cached = _cached(settings, embedder)
    long = "deploy the staging cluster " * 200  # about 1,350 tokens by the service's estimate
    vector = await cached.embed_query(long)
    [[read]] = embedder.calls
    assert long.startswith(read) and estimate_text_tokens(read) <= QUERY_MAX_TOKENS < len(read)
    assert vector == embedder.vector(read)
    assert await cached.embed_query(long) == vector and len(embedder.calls) == 1  # cached
    short = "deploy failed"
    await cached.embed_query(short)
    assert embedder.calls[-1] == [short]


class CountingUnitOfWork(UnitOfWork):
    """Counts the write transactions it opens."""

    writes = 0

    def write(self):  # type: ignore[no-untyped-def, override]
        self.writes += 1
        return super().write()


async def test_query_vectors_are_written_later_in_one_transaction(settings: Settings) -> None:
    embedder = HeldEmbedder()
    embedder.release.set()
    engine, other_engine = create_db_engine(settings), create_db_engine(settings)
    try:
        uow = CountingUnitOfWork(engine)
        cached = CachedEmbedder(uow, embedder, query_write_delay_s=3600)
        queries = ["deploy failed", "who owns billing", "rollback plan"]
        for query in queries:
            await cached.embed_query(query)
        assert uow.writes == 0  # the prompts did not wait for (or run beside) a write
        await cached.drain()
        assert uow.writes == 1
        another_process = CachedEmbedder(UnitOfWork(other_engine), embedder)
        for query in queries:
            # stored as float32
            vector = await another_process.embed_query(query)
            assert vector == pytest.approx(embedder.vector(query))
        assert len(embedder.calls) == len(queries)  # the second read them all from the database
    finally:
        engine.dispose()
        other_engine.dispose()


async def test_query_vectors_reach_the_database_after_the_delay_without_a_drain(
    settings: Settings,
) -> None:
    embedder = HeldEmbedder()
    embedder.release.set()
    engine, other_engine = create_db_engine(settings), create_db_engine(settings)
    try:
        cached = CachedEmbedder(UnitOfWork(engine), embedder, query_write_delay_s=0.01)
        await cached.embed_query("deploy failed")
        for _ in range(100):
            await asyncio.sleep(0.02)
            if not cached._unwritten and not cached._storing:
                break
        another_process = CachedEmbedder(UnitOfWork(other_engine), embedder)
        vector = await another_process.embed_query("deploy failed")
        assert vector == pytest.approx(embedder.vector("deploy failed"))
        assert embedder.calls == [["deploy failed"]]
    finally:
        engine.dispose()
        other_engine.dispose()
