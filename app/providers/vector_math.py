"""Vector arithmetic of the embedding providers: cosine similarity and unit length. Pure."""

from __future__ import annotations

import math
from collections.abc import Sequence


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors of equal length; 0.0 when either is zero."""
    if len(a) != len(b):
        raise ValueError(f"vector lengths differ: {len(a)} != {len(b)}")
    norms = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    return math.fsum(x * y for x, y in zip(a, b, strict=True)) / norms if norms else 0.0


def normalise(vector: Sequence[float]) -> list[float]:
    """``vector`` scaled to unit L2 length; a zero vector raises ValueError."""
    norm = math.sqrt(math.fsum(x * x for x in vector))
    if not norm or not math.isfinite(norm):
        raise ValueError("cannot normalise a zero or non-finite vector")
    return [x / norm for x in vector]
