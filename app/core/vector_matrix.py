"""Exact nearest neighbours over one partition's vectors, held as one float32 matrix.

A partition (one owner's memory chunks, one session's archived messages) is searched by a single
matrix-vector product (BLAS), which scans a partition's vectors in a fraction of the time an SQL
virtual-table scan takes (bench/RESULTS.md, Measurements behind the code), and stays exact: no approximate first stage, so nothing the exact
search would find is missed. The database stays the source of truth: a matrix is brought up to
date from the rows changed since the last change it applied (``apply``), so another process's
writes are seen at the next search.

Vectors are normalised when they are added, so a dot product is the cosine similarity and the
distance returned is ``1 - cosine`` (what the SQL path returns for ``distance_metric=cosine``).
Each row may carry an integer ``tag`` (a message's time in epoch ms) to filter on.

The product runs on the calling thread only (numpy's BLAS is limited to one thread at the first
search). A product over a large partition is bound by memory bandwidth: a second BLAS thread made
it only a little faster on 2 cores, but its pool then spun on the other core for the rest of the
request, adding to the search's CPU time and taking the core a concurrent request, or the search's
own word side running beside it, needs.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np
from threadpoolctl import threadpool_limits

# One changed row: (row id, vector or None when the row was removed, tag, change number).
Change = tuple[int, bytes | list[float] | None, int, int]

_MIN_CAPACITY = 64


# A tuple: a search builds hundreds, and a tuple is cheaper to build than a frozen dataclass.
class Neighbour(NamedTuple):
    row_id: int
    distance: float


class VectorMatrix:
    """The vectors of one partition, with the last change number applied."""

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions
        self.last_change = 0
        self._vectors = np.zeros((_MIN_CAPACITY, dimensions), dtype=np.float32)
        self._ids = np.zeros(_MIN_CAPACITY, dtype=np.int64)
        self._tags = np.zeros(_MIN_CAPACITY, dtype=np.int64)
        self._size = 0
        self._slot_of: dict[int, int] = {}

    def __len__(self) -> int:
        return self._size

    @property
    def nbytes(self) -> int:
        return int(self._vectors.nbytes + self._ids.nbytes + self._tags.nbytes)

    def apply(self, changes: Iterable[Change]) -> None:
        """Add, replace or remove rows, in change order; remembers the highest change number."""
        for row_id, vector, tag, change in changes:
            if vector is None:
                self._remove(row_id)
            else:
                self._put(row_id, _as_array(vector, self.dimensions), tag)
            self.last_change = max(self.last_change, change)

    def reserve(self, rows: int) -> None:
        """Make room for ``rows`` rows at once (a partition about to be loaded, its size known):
        growing by doubling while loading 100,000 rows copied the matrix eight times."""
        self._grow_to(rows)

    def extend(self, ids: np.ndarray, vectors: np.ndarray, tags: np.ndarray) -> None:
        """Add many new rows at once (a partition being loaded); ids must not be present yet."""
        count = len(ids)
        if count == 0:
            return
        if vectors.shape != (count, self.dimensions):
            raise ValueError(f"expected {count} vectors of {self.dimensions} dimensions")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        start = self._size
        self._grow_to(start + count)
        self._vectors[start : start + count] = vectors / np.where(norms > 0, norms, 1)
        self._ids[start : start + count] = ids
        self._tags[start : start + count] = tags
        self._slot_of.update(zip(ids.tolist(), range(start, start + count), strict=True))
        self._size += count

    def nearest(
        self, query: list[float], k: int, tag_range: tuple[int | None, int | None] = (None, None)
    ) -> list[Neighbour]:
        """The ``k`` rows closest to ``query`` by cosine distance, nearest first (ties by row id)."""
        q = _as_array(query, self.dimensions)
        if k <= 0 or self._size == 0:
            return []
        _blas_on_calling_thread()
        similarities = self._vectors[: self._size] @ q
        candidates = np.arange(self._size)
        low, high = tag_range
        if low is not None or high is not None:
            tags = self._tags[: self._size]
            keep = np.ones(self._size, dtype=bool)
            if low is not None:
                keep &= tags >= low
            if high is not None:
                keep &= tags <= high
            candidates = candidates[keep]
            similarities = similarities[keep]
        if len(candidates) > k:
            top = np.argpartition(-similarities, k - 1)[:k]
            candidates, similarities = candidates[top], similarities[top]
        ids = self._ids[candidates]
        order = np.lexsort((ids, -similarities))  # the last key is the primary one
        return [Neighbour(int(ids[i]), float(1.0 - similarities[i])) for i in order]

    def _put(self, row_id: int, vector: np.ndarray, tag: int) -> None:
        slot = self._slot_of.get(row_id)
        if slot is None:
            self._grow_to(self._size + 1)
            slot = self._size
            self._size += 1
            self._slot_of[row_id] = slot
            self._ids[slot] = row_id
        self._vectors[slot] = vector
        self._tags[slot] = tag

    def _remove(self, row_id: int) -> None:
        slot = self._slot_of.pop(row_id, None)
        if slot is None:
            return
        last = self._size - 1
        if slot != last:  # the last row fills the hole: removal costs O(1)
            moved = int(self._ids[last])
            self._vectors[slot] = self._vectors[last]
            self._ids[slot] = moved
            self._tags[slot] = self._tags[last]
            self._slot_of[moved] = slot
        self._size = last

    def _grow_to(self, size: int) -> None:
        capacity = len(self._ids)
        if size <= capacity:
            return
        capacity = max(size, capacity * 2)
        self._vectors = _resized(self._vectors, capacity)
        self._ids = _resized(self._ids, capacity)
        self._tags = _resized(self._tags, capacity)


@functools.cache
def _blas_on_calling_thread() -> None:
    """Limit numpy's BLAS to one thread, for the whole process (the embedding model has its own)."""
    threadpool_limits(1, user_api="blas")


def _resized(array: np.ndarray, capacity: int) -> np.ndarray:
    grown = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
    grown[: len(array)] = array
    return grown


def _as_array(vector: bytes | list[float], dimensions: int) -> np.ndarray:
    """A unit float32 vector from a float32 blob or a list (a zero vector stays zero)."""
    if isinstance(vector, bytes | bytearray | memoryview):
        array = np.frombuffer(vector, dtype=np.float32)
    else:
        array = np.asarray(vector, dtype=np.float32)
    if array.shape != (dimensions,):
        raise ValueError(f"expected {dimensions} dimensions, got {array.shape}")
    norm = float(np.linalg.norm(array))
    return array / norm if norm > 0 else array.copy()


def float32_bytes(vector: Sequence[float]) -> bytes:
    """A vector as the float32 little-endian bytes sqlite-vec stores and ``cosines`` reads."""
    return np.asarray(vector, dtype="<f4").tobytes()


def cosines(blobs: Sequence[bytes], vector: Sequence[float]) -> list[float]:
    """Cosine similarity of each stored float32 vector to ``vector`` (0 for a zero vector), as a
    ``distance_metric=cosine`` search's ``1 - distance``."""
    if not blobs:
        return []
    # Shaped by the query's length: a stored vector of another size fails here, never mis-shaped.
    matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(-1, len(vector))
    if len(matrix) != len(blobs):
        raise ValueError("stored vectors and the query differ in dimensions")
    query = np.asarray(vector, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(query))
    products = matrix @ query
    return [float(p / n) if n > 0 else 0.0 for p, n in zip(products, norms, strict=True)]


def best_cosines(owned: Sequence[tuple[int, bytes]], vector: Sequence[float]) -> dict[int, float]:
    """Each owner's best cosine similarity to ``vector`` among its stored float32 vectors, from
    (owner id, vector bytes) pairs: a message's or a memory chunk's best passage."""
    best: dict[int, float] = {}
    similarities = cosines([blob for _, blob in owned], vector)
    for (owner, _), similarity in zip(owned, similarities, strict=True):
        if similarity > best.get(owner, -2.0):
            best[owner] = similarity
    return best
