"""Typed results of archive search (no I/O: the pure renderer reads them too)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class Neighbour:
    """An archived turn next to a message hit (``context`` > 0)."""

    seq: int
    role: str
    text: str
    timestamp: datetime | None


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A message (``seq`` and ``role`` set) or an archive overview that matched."""

    archive_id: str
    seq: int | None
    role: str | None
    kind: str  # "message" or "overview"
    snippet: str
    score: float | None
    # When the message was said (the host's time, else storage time); for an overview, when it
    # was written.
    timestamp: datetime | None
    match: str | None = None  # keyword mode: "all" or "partial"
    context: list[Neighbour] | None = None


@dataclass(frozen=True, slots=True)
class SearchResult:
    query: str
    mode: str
    results: list[SearchHit]
    overviews: list[SearchHit]
    truncated: bool
    retrieval: str | None = None  # ranked mode: "hybrid" or "lexical"
