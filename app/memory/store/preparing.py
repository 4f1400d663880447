"""What of a memory the model reads, and its vectors: computed before any transaction opens.

A memory's first chunks get vectors (``EmbeddingLimits``), and so do the passages of each of those
chunks that holds several (app/search/text/passages.py), from the part the model reads of it: at most
about as many tokens again as the chunks' own. One embedding call serves a whole batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.threads import to_thread
from app.memory.store.embedding_cache import CachedEmbedder
from app.memory.store.writes import PreparedChunks
from app.providers.protocols import ProviderError
from app.search.text.passages import embedding_order, message_passages, with_their_passages

if TYPE_CHECKING:
    from app.settings.groups import EmbeddingSettings


@dataclass(frozen=True, slots=True)
class EmbeddingLimits:
    """What of one memory gets vectors: its first ``max_chunks`` chunks, cut to ``max_tokens`` of
    the model's input tokens together (every chunk is in the word index). Embedding costs what
    the model reads (bench/RESULTS.md, embeddings), so one long memory cannot hold the embedder,
    and the cores, for long."""

    max_chunks: int = 4
    max_tokens: int = 256

    @classmethod
    def of(cls, settings: EmbeddingSettings) -> EmbeddingLimits:
        return cls(settings.max_chunks_per_memory, settings.max_tokens_per_memory)


DEFAULT_LIMITS = EmbeddingLimits()


async def embedded_part(
    embedder: CachedEmbedder | None, limits: EmbeddingLimits, chunks: list[str]
) -> list[str]:
    """What of a memory's chunks the model reads: the first ones, the last of them possibly cut."""
    if embedder is None:
        return []
    return await embedder.fit_passages(chunks[: limits.max_chunks], limits.max_tokens)


async def prepare_many(
    embedder: CachedEmbedder | None, limits: EmbeddingLimits, chunked: list[list[str]]
) -> list[PreparedChunks]:
    """Each memory's chunks (``chunked``) with the vectors of its embedded part and of their
    passages, in one embedding call; a failing embedder leaves them all keyword-only."""
    keyword_only = [PreparedChunks(chunks, None, None) for chunks in chunked]
    if embedder is None or not chunked:
        return keyword_only
    try:
        embedded = [await embedded_part(embedder, limits, chunks) for chunks in chunked]
        texts = await to_thread(_with_passages, embedded)
        every = [pair for pairs in texts for pair in pairs]
        order = embedding_order(every)
        vectors = await embedder.embed_passages(order)
        if len(vectors) != len(order):
            raise ProviderError(f"{len(vectors)} vectors for {len(order)} texts")
    except (ProviderError, TimeoutError):
        return keyword_only
    regrouped = iter(with_their_passages(every, vectors))
    prepared = []
    for chunks, pairs in zip(chunked, texts, strict=True):
        own = [next(regrouped) for _ in pairs]  # this memory's chunks: (whole, passages)
        passages = tuple(p for _, p in own)
        prepared.append(PreparedChunks(chunks, [w for w, _ in own], embedder.model_id, passages))
    return prepared


def _with_passages(embedded: list[list[str]]) -> list[list[tuple[str, list[str]]]]:
    """Each memory's embedded chunks, each with its passages (CPU work: a worker thread)."""
    return [[(text, message_passages(text)) for text in part] for part in embedded]
