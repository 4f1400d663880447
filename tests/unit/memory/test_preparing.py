"""A batch of memories embedded in one call: each chunk gets the vectors of its own text and of
its own passages, whatever the batch holds around it; a miscounting embedder leaves the batch
keyword-only."""

from __future__ import annotations

from typing import Any

from app.memory.store.preparing import EmbeddingLimits, prepare_many
from app.search.text.passages import message_passages


def vector_of(text: str) -> list[float]:
    return [float(len(text)), float(sum(map(ord, text)) % 997)]


class Embedder:
    """What prepare_many uses of the cached embedder: fits by dropping blank texts."""

    model_id = "test-model"

    def __init__(self, missing: int = 0) -> None:
        self.missing = missing
        self.calls: list[list[str]] = []

    async def fit_passages(self, texts: list[str], max_tokens: int) -> list[str]:
        return [t for t in texts if t.strip()]

    async def embed_passages(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(texts)
        return [vector_of(t) for t in texts[: len(texts) - self.missing]]


CHUNKED = [
    ["One sentence here. Another sentence there."],
    [""],
    ["Single fact only"],
    ["Alpha beta gamma. Delta epsilon zeta.", "Eta theta iota. Kappa lambda mu. Nu xi omicron."],
    ["First chunk. Of five.", "Second one.", "Third chunk.", "Fourth one. Two parts.", "Fifth."],
]


async def test_each_chunk_gets_its_own_vectors_and_its_passages() -> None:
    embedder: Any = Embedder()
    prepared = await prepare_many(embedder, EmbeddingLimits(max_chunks=4), CHUNKED)
    assert len(embedder.calls) == 1  # one call for the whole batch
    for chunks, got in zip(CHUNKED, prepared, strict=True):
        embedded = [t for t in chunks[:4] if t.strip()]  # only the first four chunks are read
        assert got.texts == chunks
        assert got.model_id == "test-model"
        assert got.vectors == [vector_of(t) for t in embedded]
        assert got.passages == tuple(
            tuple(vector_of(p) for p in message_passages(t)) for t in embedded
        )
    assert len(prepared[3].passages[1]) == 3  # three sentences
    assert prepared[2].passages == ((),)  # one sentence: its whole vector is its passage's
    assert prepared[1].vectors == [] and prepared[1].passages == ()  # blank: nothing to embed
    assert len(prepared[4].vectors or []) == 4  # the fifth chunk is past max_chunks


async def test_a_miscounting_embedder_leaves_the_batch_keyword_only() -> None:
    embedder: Any = Embedder(missing=1)
    prepared = await prepare_many(embedder, EmbeddingLimits(), CHUNKED)
    assert [(p.vectors, p.passages, p.model_id) for p in prepared] == [(None, (), None)] * 5
    assert [p.texts for p in prepared] == CHUNKED


async def test_no_embedder_is_keyword_only() -> None:
    prepared = await prepare_many(None, EmbeddingLimits(), CHUNKED[:2])
    assert [(p.texts, p.vectors) for p in prepared] == [(CHUNKED[0], None), (CHUNKED[1], None)]
