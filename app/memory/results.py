"""What the memory use cases answer: typed results that the HTTP layer maps to its wire shapes."""

from __future__ import annotations

from dataclasses import dataclass

from app.memory.records import MemoryRecord
from app.search.fusion import Explain


@dataclass(frozen=True, slots=True)
class CommitOutcome:
    """ADD or UPDATE (of the profile) with the stored memory; NONE with its reason (and, for a
    duplicate, the memory already there)."""

    action: str
    reason: str | None = None
    memory: MemoryRecord | None = None


@dataclass(frozen=True, slots=True)
class MemoryPage:
    items: list[MemoryRecord]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class Deleted:
    id: str
    deleted: bool = True


@dataclass(frozen=True, slots=True)
class ForgetOutcome:
    deleted: int
    ids: list[str]
    dry_run: bool


@dataclass(frozen=True, slots=True)
class ImportOutcome:
    imported: int
    ids: list[str]


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One ranked memory; ``explain`` holds the score's components when they were asked for."""

    record: MemoryRecord
    score: float
    level: int
    explain: Explain | None = None


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    """The mode actually used (``bm25`` when no query vector could be had) and the ranked hits."""

    mode: str
    results: list[SearchHit]
