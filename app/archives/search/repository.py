"""SQL of archived messages' search: what a search reads of a message, and the facts and
statistics Phase 2 stores for ranked search. Repositories never commit."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any, NamedTuple, TypeVar, cast

from sqlalchemy import (
    ColumnElement,
    Table,
    bindparam,
    case,
    delete,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session

from app.db.driver_query import DriverQuery
from app.db.models import (
    AgentSession,
    MessageSearch,
    SessionSearchStats,
    SessionTerm,
    StoredMessage,
)

T = TypeVar("T")

# What a search reads of a message: where it is and what it says. Not its body: a tool result's
# body can be most of a megabyte, and only a hit's time is read from it (``message_time_rows``).
_SEARCH_FIELDS = (
    StoredMessage.id,
    StoredMessage.archive_pk,
    StoredMessage.seq,
    StoredMessage.role,
    StoredMessage.search_text,
)


class SearchFields(NamedTuple):
    """A message's search fields, by name (as ``iter_archived_texts`` gives its rows)."""

    id: int
    archive_pk: int | None
    seq: int
    role: str
    search_text: str


_MESSAGES_BY_IDS = DriverQuery(
    select(*_SEARCH_FIELDS).where(StoredMessage.id.in_(bindparam("ids", expanding=True)))
)


def messages_by_ids(db: Session, ids: Sequence[int]) -> dict[int, SearchFields]:
    """The search fields of these messages."""
    if not ids:
        return {}
    found = _MESSAGES_BY_IDS.in_session(db).all_rows({"ids": list(ids)})
    return {row[0]: SearchFields(*row) for row in found}


_MESSAGE_TIMES = DriverQuery(
    select(
        StoredMessage.id,
        StoredMessage.created_at,
        MessageSearch.said_at_ms,
        case((MessageSearch.said_at_ms.is_(None), StoredMessage.body), else_=None),
    )
    .select_from(StoredMessage)
    .outerjoin(MessageSearch, MessageSearch.message_id == StoredMessage.id)
    .where(StoredMessage.id.in_(bindparam("ids", expanding=True))),
    convert_results=True,
)


def message_time_rows(
    db: Session, ids: Sequence[int]
) -> list[tuple[int, datetime, int | None, str | None]]:
    """(id, stored at, said at in ms from the search facts, body) of these messages; the body only
    where the search facts hold no time (Phase 2 has not indexed the message yet)."""
    rows: list[tuple[int, datetime, int | None, str | None]] = []
    for chunk in _chunks(ids):
        rows += cast(
            list[tuple[int, datetime, int | None, str | None]],
            _MESSAGE_TIMES.in_session(db).all_rows({"ids": chunk}),
        )
    return rows


def iter_archived_texts(
    db: Session, session: AgentSession, archive_pk: int | None, batch: int = 2000
) -> Iterator[Any]:
    """Archived messages' search fields (plain rows, not ORM objects: scans touch every row) in
    sequence order."""
    stmt = select(*_SEARCH_FIELDS).where(StoredMessage.session_pk == session.id)
    if archive_pk is None:
        stmt = stmt.where(StoredMessage.archive_pk.is_not(None))
    else:
        stmt = stmt.where(StoredMessage.archive_pk == archive_pk)
    # Closed with the generator: a search that stops early (a hit limit, a regex time-out) must not
    # leave PostgreSQL's server-side cursor open.
    with db.execute(stmt.order_by(StoredMessage.seq).execution_options(yield_per=batch)) as rows:
        yield from rows


def session_text_stats(
    db: Session, session: AgentSession, archive_pk: int | None
) -> tuple[int, float]:
    """(archived message count, average search-text length in characters) of one session."""
    stmt = select(func.count(), func.avg(func.length(StoredMessage.search_text))).where(
        StoredMessage.session_pk == session.id
    )
    stmt = stmt.where(
        StoredMessage.archive_pk.is_not(None)
        if archive_pk is None
        else StoredMessage.archive_pk == archive_pk
    )
    count, average = db.execute(stmt).one()
    return int(count or 0), float(average or 0.0)


def messages_around(
    db: Session, session: AgentSession, seqs: Sequence[int], before_after: int
) -> dict[int, StoredMessage]:
    """Archived messages of a session within ``before_after`` positions of any given sequence number."""
    wanted = {s + d for s in seqs for d in range(-before_after, before_after + 1)}
    if not wanted:
        return {}
    # By (session, seq), the unique key, live messages left out here: with the archive in the
    # filter the planner reads the session's whole archived range (bench/RESULTS.md).
    stmt = select(StoredMessage).where(
        StoredMessage.session_pk == session.id, StoredMessage.seq.in_(sorted(wanted))
    )
    rows = db.execute(stmt).scalars()
    return {row.seq: row for row in rows if row.archive_pk is not None}


def add_search_facts(db: Session, rows: Sequence[MessageSearch]) -> None:
    """Insert or replace what Phase 2 learned about archived messages (a re-run replaces)."""
    if not rows:
        return
    db.execute(
        delete(MessageSearch).where(MessageSearch.message_id.in_([r.message_id for r in rows]))
    )
    db.add_all(rows)
    db.flush()


_SEARCH_FACT_PASSAGES = DriverQuery(
    select(MessageSearch.message_id, MessageSearch.vector_passages).where(
        MessageSearch.message_id.in_(bindparam("ids", expanding=True))
    )
)
_EMBEDDED_BY_OTHER_MODELS = DriverQuery(
    select(MessageSearch.message_id).where(
        MessageSearch.message_id.in_(bindparam("ids", expanding=True)),
        MessageSearch.embedding_model.is_not(None),
        MessageSearch.embedding_model != bindparam("model"),
    )
)


def with_search_facts(db: Session, message_ids: Sequence[int]) -> dict[int, int]:
    """Which of these messages already have search facts, with their passage vectors' count."""
    found: dict[int, int] = {}
    for chunk in _chunks(message_ids):
        rows = _SEARCH_FACT_PASSAGES.in_session(db).all_rows({"ids": chunk})
        found.update((int(m), int(count or 0)) for m, count in rows)
    return found


def embedded_by_other_models(db: Session, message_ids: Sequence[int], model: str) -> set[int]:
    """Which of these messages hold vectors of a model other than ``model``."""
    found: set[int] = set()
    for chunk in _chunks(list(dict.fromkeys(message_ids))):
        rows = _EMBEDDED_BY_OTHER_MODELS.in_session(db).all_rows({"ids": chunk, "model": model})
        found.update(int(m) for (m,) in rows)
    return found


def _chunks(values: Sequence[T], size: int = 500) -> Iterator[list[T]]:
    # IN lists of at most 500 values: far inside SQLite's bound on a statement's parameters, and
    # each length is a form of the driver query's SQL that it keeps (a few hundred at most).
    for start in range(0, len(values), size):
        yield list(values[start : start + size])


def _stale_for(model: str) -> ColumnElement[bool]:
    """Archived messages with search facts whose vectors are not ``model``'s: embedded by another
    model, or not embedded (no embedder then, or it failed) although they have text."""
    return or_(
        MessageSearch.embedding_model != model,
        MessageSearch.embedding_model.is_(None)
        & (func.length(func.trim(StoredMessage.search_text)) > 0),
    )


def count_stale_embedded(db: Session, model: str) -> int:
    stmt = (
        select(func.count())
        .select_from(MessageSearch)
        .join(StoredMessage, StoredMessage.id == MessageSearch.message_id)
        .where(_stale_for(model))
    )
    return int(db.scalar(stmt) or 0)


def stale_embedded_page(db: Session, model: str, after_id: int, limit: int) -> list[StoredMessage]:
    """The next ``limit`` stale archived messages by id, after ``after_id``."""
    stmt = (
        select(StoredMessage)
        .join(MessageSearch, MessageSearch.message_id == StoredMessage.id)
        .where(StoredMessage.id > after_id, _stale_for(model))
        .order_by(StoredMessage.id)
        .limit(limit)
    )
    return list(db.scalars(stmt))


def search_stats(db: Session, session_pk: int) -> SessionSearchStats | None:
    return db.get(SessionSearchStats, session_pk)


_SEARCH_TOTALS = DriverQuery(
    select(SessionSearchStats.documents, SessionSearchStats.total_chars).where(
        SessionSearchStats.session_pk == bindparam("s")
    )
)


def search_totals(db: Session, session_pk: int) -> tuple[int, int] | None:
    """(messages, characters) of a session's stored statistics, or None before Phase 2 wrote
    them; read as a search reads it, without loading the row into the session."""
    row = _SEARCH_TOTALS.in_session(db).first_row({"s": session_pk})
    return None if row is None else (int(row[0]), int(row[1]))


def faceted_texts(db: Session, session_pk: int) -> Iterator[Any]:
    """(search_text, dates) of a session's archived messages that have search facts."""
    stmt = (
        select(StoredMessage.search_text, MessageSearch.dates)
        .join(MessageSearch, MessageSearch.message_id == StoredMessage.id)
        .where(MessageSearch.session_pk == session_pk)
    )
    with db.execute(stmt.execution_options(yield_per=2000)) as rows:
        yield from rows


def add_search_stats(
    db: Session, tenant_id: str, session_pk: int, documents: int, chars: int, terms: dict[str, int]
) -> None:
    """Add messages to a session's stored statistics (created on first use)."""
    stats = db.get(SessionSearchStats, session_pk)
    if stats is None:
        stats = SessionSearchStats(
            session_pk=session_pk, tenant_id=tenant_id, documents=0, total_chars=0
        )
        db.add(stats)
    stats.documents += documents
    stats.total_chars += chars
    known = term_frequencies(db, session_pk, list(terms))
    old = [{"t": term, "n": known[term] + count} for term, count in terms.items() if term in known]
    new = [
        {"session_pk": session_pk, "term": term, "tenant_id": tenant_id, "documents": count}
        for term, count in terms.items()
        if term not in known
    ]
    # Core statements on the table: plain executemany, no ORM bulk semantics
    table = cast(Table, SessionTerm.__table__)
    if old:
        stmt = update(table).where(table.c.session_pk == session_pk, table.c.term == bindparam("t"))
        db.execute(stmt.values(documents=bindparam("n")), old)
    if new:
        db.execute(insert(table), new)
    db.flush()


_TERM_FREQUENCIES = DriverQuery(
    select(SessionTerm.term, SessionTerm.documents).where(
        SessionTerm.session_pk == bindparam("s"),
        SessionTerm.term.in_(bindparam("terms", expanding=True)),
    )
)


def term_frequencies(db: Session, session_pk: int, terms: Sequence[str]) -> dict[str, int]:
    """Stored document frequencies of the given terms in one session (absent terms are left out)."""
    found: dict[str, int] = {}
    for chunk in _chunks(terms):
        rows = _TERM_FREQUENCIES.in_session(db).all_rows({"s": session_pk, "terms": chunk})
        found.update({term: int(count) for term, count in rows})
    return found
