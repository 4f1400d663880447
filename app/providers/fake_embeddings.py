"""A deterministic embedder for tests: the hashing trick, no model and no network."""

from __future__ import annotations

import hashlib
import re

from app.core.rules.tokens import estimate_text_tokens, fit_to_token_budget
from app.providers.embeddings import endpoint_fingerprint
from app.providers.vector_math import normalise

FAKE_PROVIDER = "fake"
_WORD = re.compile(r"\w+")


class FakeEmbedder:
    """Deterministic hashing-trick embeddings: texts sharing words or character pairs are close."""

    provider = FAKE_PROVIDER
    similarity_floor = 0.0

    def __init__(self, dimensions: int = 256) -> None:
        if dimensions < 2:
            raise ValueError("dimensions must be at least 2")
        self.dimensions = dimensions
        self.model_id = f"hashing-{dimensions}"
        self.endpoint_key = endpoint_fingerprint(FAKE_PROVIDER, self.model_id)
        self.calls: list[list[str]] = []

    async def embed_passages(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, recording the call; queries use the same recipe."""
        self.calls.append(list(texts))
        return [self.vector(text) for text in texts]

    embed_queries = embed_passages

    async def fit_passages(self, texts: list[str], max_tokens: int) -> list[str]:
        """Counted by the service's token estimator, as for an endpoint."""
        return fit_to_token_budget(texts, max_tokens, estimate_text_tokens)

    def vector(self, text: str) -> list[float]:
        """The unit vector of one text: its tokens hashed into signed buckets."""
        counts = [0.0] * self.dimensions
        for token in _tokens(text) or [""]:
            digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
            value = int.from_bytes(digest, "big")
            counts[value % self.dimensions] += 1.0 if value >> 63 else -1.0
        return (
            normalise(counts) if any(counts) else normalise([1.0] + [0.0] * (self.dimensions - 1))
        )


def _tokens(text: str) -> list[str]:
    """Lowercased words, plus the character bigrams of each word (``w:``/``b:`` tagged)."""
    tokens: list[str] = []
    for word in _WORD.findall(text.lower()):
        tokens.append(f"w:{word}")
        tokens.extend(f"b:{word[i : i + 2]}" for i in range(len(word) - 1))
    return tokens
