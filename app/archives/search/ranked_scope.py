"""What a ranked archive search looks in (the session, its archives, a time window) and with
(the query's vectors)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from app.archives.read.repository import ArchiveHead
from app.archives.search.hits import TimeWindow
from app.db.models import AgentSession
from app.db.shared.rows import TimeRange


@dataclass(frozen=True, slots=True)
class Scope:
    session: AgentSession
    archives: Mapping[int, ArchiveHead]
    only: int | None
    window: TimeWindow = field(default_factory=TimeWindow)

    def window_ms(self) -> TimeRange:
        return (_ms(self.window.since), _ms(self.window.until))


@dataclass(frozen=True, slots=True)
class QueryVectors:
    """The query's vector, and one per clause when ``app.core.query.clauses`` finds several;
    ``model``: the embedding model that made them. Only messages embedded by that model are
    compared with them (None compares every stored vector)."""

    whole: list[float]
    clauses: tuple[list[float], ...] = ()
    model: str | None = None


def _ms(moment: datetime | None) -> int | None:
    return None if moment is None else int(moment.timestamp() * 1000)
