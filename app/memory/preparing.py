"""What of a memory the model reads, and its vectors: computed before any transaction opens.

A memory's first chunks get vectors (``EmbeddingLimits``), and so do the passages of each of those
chunks that holds several (app/core/passages.py), from the part the model reads of it: at most
about as many tokens again as the chunks' own. One embedding call serves a whole batch.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.passages import message_passages
from app.core.threads import to_thread
from app.memory.embedding_cache import CachedEmbedder
from app.memory.store import PreparedChunks
from app.providers.protocols import ProviderError

if TYPE_CHECKING:
    from app.settings.groups import EmbeddingSettings


@dataclass(frozen=True, slots=True)
class EmbeddingLimits:
    """What of one memory gets vectors: its first ``max_chunks`` chunks, cut to ``max_tokens`` of
    the model's input tokens together (every chunk is in the word index). Embedding costs what
    the model reads, about a millisecond a token for the local model on two cores, so one long
    memory cannot hold the embedder, and the cores, for seconds."""

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
        passages = await to_thread(_passages_of, embedded)
        wanted = [text for part in embedded for text in part]
        wanted += [p for parts in passages for chunk in parts for p in chunk]
        vectors = await embedder.embed_passages(wanted)
        if len(vectors) != len(wanted):
            raise ProviderError(f"{len(vectors)} vectors for {len(wanted)} texts")
    except (ProviderError, TimeoutError):
        return keyword_only
    return _assembled(chunked, embedded, passages, iter(vectors), embedder.model_id)


def _passages_of(embedded: list[list[str]]) -> list[list[list[str]]]:
    return [[message_passages(text) for text in part] for part in embedded]


def _assembled(
    chunked: list[list[str]],
    embedded: list[list[str]],
    passages: list[list[list[str]]],
    vectors: Iterator[list[float]],
    model_id: str,
) -> list[PreparedChunks]:
    """The vectors, whole texts' first and then passages', handed back to their memories."""
    whole = [[next(vectors) for _ in part] for part in embedded]
    return [
        PreparedChunks(
            chunks, own, model_id, tuple(tuple(next(vectors) for _ in chunk) for chunk in parts)
        )
        for chunks, own, parts in zip(chunked, whole, passages, strict=True)
    ]
