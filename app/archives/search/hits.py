"""Search hits of archive search: the message's own time, its archive, snippet, neighbours, and
the time filter. Overviews are separate hits that never take a message's place."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy.orm import Session

from app.archives.read import repository as archive_repo
from app.archives.read.repository import ArchiveHead
from app.archives.read.results import Neighbour, SearchHit
from app.archives.search import matching
from app.archives.search import repository as repo
from app.core.rules.dates import host_time
from app.db.models import AgentSession, StoredMessage

CONTEXT_SNIPPET_CHARS = 300
TIME_BATCH_LIMIT = 2000  # matched rows whose times one statement reads, at most
T = TypeVar("T")


def archive_places(db: Session, session: AgentSession) -> dict[int, ArchiveHead]:
    """Every archive of the session by primary key, oldest first: what a hit names of its archive."""
    return {head.id: head for head in archive_repo.archive_heads(db, session.id)}


@dataclass(frozen=True, slots=True)
class TimeWindow:
    since: datetime | None = None
    until: datetime | None = None

    def admits(self, moment: datetime | None) -> bool:
        if self.since is None and self.until is None:
            return True
        if moment is None:
            return False  # a filtered search cannot vouch for a message of unknown time
        return (self.since is None or moment >= self.since) and (
            self.until is None or moment <= self.until
        )


def time_of_body(body: str, fallback: datetime | None) -> datetime | None:
    """The message's own time from its stored JSON; the storage time when the host sent none."""
    try:
        message = json.loads(body)
    except ValueError:
        return fallback
    stamp = host_time(message.get("timestamp")) if isinstance(message, dict) else None
    return stamp or fallback


def message_times(db: Session, ids: Sequence[int]) -> dict[int, datetime | None]:
    """When each of these messages was said, as ``time_of_body`` tells it: from the search facts
    Phase 2 wrote (the host's timestamp in ms, else the storage time), or from the body of a
    message without them."""
    return {
        message_id: host_time(said_at_ms)
        if said_at_ms is not None
        else time_of_body(body or "", created_at)
        for message_id, created_at, said_at_ms, body in repo.message_time_rows(db, ids)
    }


def said_in_window(
    db: Session, matched: Iterable[tuple[Any, T]], window: TimeWindow, first: int
) -> Iterator[tuple[Any, T, datetime | None]]:
    """(row, what the caller found in it, its time) of the matched rows said inside ``window``, in
    order. Their times are read in batches, the first of ``first`` rows (most searches stop
    there), then four times larger."""
    size, batch = max(first, 1), []
    for item in matched:
        batch.append(item)
        if len(batch) >= size:
            yield from _admitted_batch(db, batch, window)
            batch, size = [], min(size * 4, TIME_BATCH_LIMIT)
    yield from _admitted_batch(db, batch, window)


def _admitted_batch(
    db: Session, batch: list[tuple[Any, T]], window: TimeWindow
) -> Iterator[tuple[Any, T, datetime | None]]:
    times = message_times(db, [row.id for row, _ in batch])
    for row, found in batch:
        moment = times.get(row.id)
        if window.admits(moment):
            yield row, found, moment


def message_hit(
    archive: ArchiveHead,
    row: Any,
    span: tuple[int, int] | None,
    score: float | None,
    moment: datetime | None,
    match: str | None = None,
) -> SearchHit:
    return SearchHit(
        archive_id=archive.archive_id,
        seq=row.seq,
        role=row.role,
        kind="message",
        snippet=matching.snippet(row.search_text, span or (0, 0)),
        score=score,
        timestamp=moment,
        match=match,
    )


def overview_hit(
    archive: ArchiveHead, span: tuple[int, int] | None, score: float | None, text: str
) -> SearchHit:
    """A hit on the archive's overview, ``text``."""
    return SearchHit(
        archive_id=archive.archive_id,
        seq=None,
        role=None,
        kind="overview",
        snippet=matching.snippet(text, span or (0, 0)),
        score=score,
        timestamp=archive.completed_at,
    )


def first_span(text: str, literals: list[str]) -> tuple[int, int] | None:
    """Span of the most specific literal found (the longest; the earliest among equals),
    case-insensitive: a two-character word part can occur anywhere in a long output, the whole
    compound it came from is the evidence."""
    lowered = text.casefold()
    spans = [(at, at + len(t)) for t in literals if t and (at := lowered.find(t.casefold())) >= 0]
    return min(spans, key=lambda span: (span[0] - span[1], span[0])) if spans else None


def add_context(
    db: Session, session: AgentSession, hits: list[SearchHit], turns: int
) -> list[SearchHit]:
    """The message hits, each with the ``turns`` archived messages before and after it, in order."""
    if turns <= 0 or not hits:
        return hits
    seqs = [h.seq for h in hits if h.seq is not None]
    around = repo.messages_around(db, session, seqs, turns)
    return [
        replace(
            hit,
            context=[
                _neighbour(around[s])
                for s in range(hit.seq - turns, hit.seq + turns + 1)
                if s != hit.seq and s in around
            ],
        )
        if hit.seq is not None
        else hit
        for hit in hits
    ]


def _neighbour(row: StoredMessage) -> Neighbour:
    return Neighbour(
        seq=row.seq,
        role=row.role,
        text=matching.snippet(row.search_text, (0, 0), CONTEXT_SNIPPET_CHARS),
        timestamp=time_of_body(row.body, row.created_at),
    )
