"""Embeddings through a cache (docs/recall.md, Embeddings): the database remembers every vector by
(provider, model, endpoint fingerprint, kind, text hash); a small in-process map keeps hot queries.

No transaction is held while the model runs: look up (read), embed the misses, store (write).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from array import array
from collections import OrderedDict
from collections.abc import Callable

import structlog

from app.core.clock import utcnow
from app.core.threads import to_thread
from app.db.models import EmbeddingCacheEntry
from app.db.uow import UnitOfWork
from app.memory.store import repository as repo
from app.providers.protocols import Embedder

log = structlog.get_logger(__name__)

QUERY_CACHE_SIZE = 2048
# The model tokens of a query that are embedded (about a thousand characters of prose). A query
# can be 4,000 characters (a recall prompt, a search), and text such as a dashed run is a token a
# character: the local model's time grows with the tokens it reads. Counted as a passage (the
# prefixes differ by a token).
QUERY_MAX_TOKENS = 256
# Query vectors wait this long in process before they are written, all that came meanwhile in one
# transaction: a busy prompt path then makes one cache write a second, not one per prompt.
QUERY_WRITE_DELAY_S = 1.0

# (outcome: ok | error | cache_hit, number of texts, seconds of the provider call)
EmbedObserver = Callable[[str, int, float], None]


def _pack(vector: list[float]) -> bytes:
    return array("f", vector).tobytes()


def _unpack(blob: bytes) -> list[float]:
    values = array("f")
    values.frombytes(blob)
    return values.tolist()


class CachedEmbedder:
    """Wraps an embedder with the persistent cache."""

    def __init__(
        self,
        uow: UnitOfWork,
        embedder: Embedder,
        observe: EmbedObserver | None = None,
        query_write_delay_s: float = QUERY_WRITE_DELAY_S,
    ) -> None:
        self._uow = uow
        self.embedder = embedder
        self._observe = observe
        self._queries: OrderedDict[str, list[float]] = OrderedDict()
        # Queries being embedded now: a second caller of the same text awaits the first's result.
        self._embedding: dict[str, asyncio.Task[list[float]]] = {}
        # Query vectors not written yet (the in-process map serves them meanwhile), and the
        # writes under way.
        self._unwritten: dict[str, list[float]] = {}
        self._write_delay_s = query_write_delay_s
        self._write_timer: asyncio.TimerHandle | None = None
        self._storing: set[asyncio.Future[None]] = set()

    @property
    def model_id(self) -> str:
        return self.embedder.model_id

    @property
    def similarity_floor(self) -> float:
        return self.embedder.similarity_floor

    def _key(self, kind: str, text: str) -> str:
        e = self.embedder
        raw = f"{e.provider}\x00{e.model_id}\x00{e.endpoint_key}\x00{kind}\x00{text}"
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()

    async def embed_query(self, text: str) -> list[float]:
        """One query vector (cached in memory, then in the database)."""
        key = self._key("query", text)
        hit = self._queries.get(key)
        if hit is not None:
            self._queries.move_to_end(key)
            return hit
        # One embedding per text at a time: every caller awaits the same task, which a caller's
        # time-out does not cancel (the vector still reaches the cache for the next call).
        task = self._embedding.get(key)
        if task is None:
            task = asyncio.ensure_future(self._embed_query(key, text))
            self._embedding[key] = task
            task.add_done_callback(lambda done: self._embedded(key, done))
        return await asyncio.shield(task)

    def _embedded(self, key: str, task: asyncio.Task[list[float]]) -> None:
        self._embedding.pop(key, None)
        if not task.cancelled():
            task.exception()  # retrieved here: every caller may have stopped waiting

    async def _embed_query(self, key: str, text: str) -> list[float]:
        vector = (await self._embed("query", [await self._bounded_query(text)]))[0]
        self._queries[key] = vector
        while len(self._queries) > QUERY_CACHE_SIZE:
            self._queries.popitem(last=False)
        return vector

    async def _bounded_query(self, text: str) -> str:
        """The part of a query the model reads: at most QUERY_MAX_TOKENS of its tokens. A short
        text is not counted (no character is more than four tokens)."""
        if len(text) * 4 + 8 <= QUERY_MAX_TOKENS:
            return text
        fitted = await self.embedder.fit_passages([text], QUERY_MAX_TOKENS)
        return fitted[0] if fitted else text[: QUERY_MAX_TOKENS // 4]

    async def embed_passages(self, texts: list[str]) -> list[list[float]]:
        return await self._embed("passage", texts)

    async def fit_passages(self, texts: list[str], max_tokens: int) -> list[str]:
        return await self.embedder.fit_passages(texts, max_tokens)

    async def _embed(self, kind: str, texts: list[str]) -> list[list[float]]:
        keys = [self._key(kind, t) for t in texts]
        found = await to_thread(self._lookup, keys)
        missing = [i for i, k in enumerate(keys) if k not in found]
        if self._observe is not None and len(keys) > len(missing):
            self._observe("cache_hit", len(keys) - len(missing), 0.0)
        if missing:
            batch = [texts[i] for i in missing]
            started = time.perf_counter()
            try:
                fresh = await (
                    self.embedder.embed_queries(batch)
                    if kind == "query"
                    else self.embedder.embed_passages(batch)
                )
            except Exception:
                if self._observe is not None:
                    self._observe("error", len(batch), time.perf_counter() - started)
                raise
            if self._observe is not None:
                self._observe("ok", len(batch), time.perf_counter() - started)
            new = {keys[i]: vector for i, vector in zip(missing, fresh, strict=True)}
            if kind == "query":
                self._store_later(new)
            else:
                await to_thread(self._store, new)
            found.update(new)
        return [found[k] for k in keys]

    def _store_later(self, vectors: dict[str, list[float]]) -> None:
        """A query's vector is written later, with the others that come meanwhile: the in-process
        map already serves it, and a prompt should not wait for (or share its cores with) a write
        it does not read. A passage's vector is written before its caller stores what it embedded
        it for."""
        self._unwritten.update(vectors)
        if self._write_timer is None:
            loop = asyncio.get_running_loop()
            self._write_timer = loop.call_later(self._write_delay_s, self._write_unwritten)

    def _write_unwritten(self) -> None:
        self._write_timer = None
        vectors, self._unwritten = self._unwritten, {}
        if not vectors:
            return
        task = asyncio.ensure_future(to_thread(self._store, vectors))
        self._storing.add(task)
        task.add_done_callback(self._stored)

    def _stored(self, task: asyncio.Future[None]) -> None:
        self._storing.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("query_vector_not_cached", error=str(task.exception()))

    async def drain(self) -> None:
        """Write the query vectors still waiting and wait for every write (shutdown, tests)."""
        if self._write_timer is not None:
            self._write_timer.cancel()
        self._write_unwritten()
        while self._storing:
            await asyncio.gather(*list(self._storing), return_exceptions=True)

    def _lookup(self, keys: list[str]) -> dict[str, list[float]]:
        with self._uow.read() as db:
            return {k: _unpack(v) for k, v in repo.cached_vectors(db, keys).items()}

    def _store(self, vectors: dict[str, list[float]]) -> None:
        now = utcnow()
        e = self.embedder
        entries = [
            EmbeddingCacheEntry(
                key=k,
                provider=e.provider,
                model=e.model_id,
                dimensions=len(v),
                vector=_pack(v),
                created_at=now,
            )
            for k, v in vectors.items()
        ]
        with self._uow.write() as db:
            repo.store_cached_vectors(db, entries)
