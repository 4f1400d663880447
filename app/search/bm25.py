"""BM25 as FTS5's bm25() computes it: its constants, its idf and a term's weight in a row. The
memory word index scores with these on both backends (``postings.score_chunks``), so a memory
ranks the same on SQLite and on PostgreSQL."""

from __future__ import annotations

import math

# FTS5's bm25() constants.
BM25_K1 = 1.2
BM25_B = 0.75


def fts5_idf(documents: int, frequency: int) -> float:
    """FTS5's idf: negative values become a tiny positive one."""
    idf = math.log((documents - frequency + 0.5) / (frequency + 0.5))
    return idf if idf > 0 else 1e-6


def impact(frequency: int, length: int, average_length: float) -> float:
    """BM25's weight of a term in a row without the idf (FTS5's constants): what a posting keeps,
    so that a term's postings can be read best first."""
    average = average_length if average_length > 0 else 1.0
    return (
        frequency * (BM25_K1 + 1) / (frequency + BM25_K1 * (1 - BM25_B + BM25_B * length / average))
    )
