"""Embedding-shaped vectors for approximate-search benchmarks: many vectors drawn from a Gaussian
fitted to a few real embeddings of the same corpus.

Random unit vectors are an HNSW index's worst case: in 384 dimensions every vector is almost as far
from every other, so a graph walk finds few true neighbours (recall@10 about 0.2 at 100,000). Real
embeddings are nothing like that: the local model's vectors of one corpus share a dominant
direction (cosine about 0.8 between unrelated texts) and vary along a few directions. Embedding
100,000 texts with the local model takes most of an hour on two cores, so a benchmark embeds a
sample of its corpus, keeps the sample's mean and covariance, and draws as many vectors as it
needs from that Gaussian. The draws have the spread of real embeddings (not their clusters), and
real query embeddings land where real passages would.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import numpy as np

from app.providers.embeddings import LocalE5Embedder


@dataclass(frozen=True)
class Shape:
    """A Gaussian: ``mean`` plus standard normal draws times ``factor`` (covariance = f fᵀ)."""

    mean: np.ndarray
    factor: np.ndarray

    @property
    def effective_dimensions(self) -> float:
        """The participation ratio of the covariance's eigenvalues: how many directions vary."""
        values = np.sum(self.factor**2, axis=0)
        return float(values.sum() ** 2 / np.sum(values**2))


def fit(vectors: np.ndarray) -> Shape:
    """The mean and covariance of ``vectors`` (one per row)."""
    matrix = np.asarray(vectors, dtype=np.float64)
    values, directions = np.linalg.eigh(np.cov(matrix, rowvar=False))
    return Shape(matrix.mean(axis=0), directions * np.sqrt(np.clip(values, 0.0, None)))


def draw(shape: Shape, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` unit vectors drawn from the shape (float32, one per row)."""
    normal = rng.standard_normal((count, shape.factor.shape[1]))
    matrix = (shape.mean + normal @ shape.factor.T).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix


@dataclass(frozen=True)
class Embedded:
    """The shape of a corpus sample's passage vectors and the real vectors of some queries."""

    shape: Shape
    queries: np.ndarray


def embed_shape(passages: list[str], queries: list[str]) -> Embedded:
    """Embed ``passages`` and ``queries`` with the service's local model (blocking)."""
    embedder = LocalE5Embedder()

    async def both() -> tuple[list[list[float]], list[list[float]]]:
        return await embedder.embed_passages(passages), await embedder.embed_queries(queries)

    passage_vectors, query_vectors = asyncio.run(both())
    return Embedded(fit(np.asarray(passage_vectors)), np.asarray(query_vectors, dtype=np.float32))
