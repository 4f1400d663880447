"""SQL for archives and archived messages. Repositories never commit."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any, NamedTuple, cast

from sqlalchemy import Table, bindparam, delete, func, insert, select, update
from sqlalchemy.orm import Session

from app.db.driver_load import DriverLoad
from app.db.driver_query import DriverQuery
from app.db.models import (
    AgentSession,
    Archive,
    ArchiveStatus,
    MessageSearch,
    SessionSearchStats,
    SessionTerm,
    StoredMessage,
)


def add_archive(db: Session, archive: Archive) -> Archive:
    db.add(archive)
    db.flush()
    return archive


# An archive's texts, left out where a caller reads only its place and state (each overview is a
# Working Memory, kilobytes: a search of a session with a hundred archives read them all).
_ARCHIVE_TEXTS = (
    Archive.overview,
    Archive.abstract,
    Archive.custom_instructions,
    Archive.usage_json,
    Archive.memories_json,
    Archive.error,
)


# Read by every pre-prompt assemble and archive search: built once (building a statement costs
# more than running it), run on the driver inside the caller's transaction (app/db/driver_query.py:
# SQLAlchemy's execution path and the ORM's load cost more than SQLite's own work).
_LIST_ARCHIVES = DriverLoad(
    Archive, Archive.session_pk == bindparam("s"), order_by=[Archive.archive_index]
)
# Without texts: for readers of an archive's place and state only (the history, keyword hits),
# so not attached (app/db/driver_load.py): 100 archives cost 10 ms attached, read and let go.
_LIST_ARCHIVES_WITHOUT_TEXTS = DriverLoad(
    Archive,
    Archive.session_pk == bindparam("s"),
    order_by=[Archive.archive_index],
    deferred=_ARCHIVE_TEXTS,
    attach=False,
)
_SESSION_ARCHIVE_WITHOUT_TEXTS = DriverLoad(
    Archive,
    (Archive.session_pk == bindparam("s")) & (Archive.id == bindparam("id")),
    deferred=_ARCHIVE_TEXTS,
    attach=False,
)
_OVERVIEW = select(Archive.overview).where(Archive.id == bindparam("id"))
_BODIES_OF_ARCHIVES = (
    # The redacted copy when there is one (see StoredMessage).
    select(
        func.coalesce(StoredMessage.redacted_body, StoredMessage.body).label("body"),
        StoredMessage.tokens,
    )
    .where(StoredMessage.archive_pk.in_(bindparam("ids", expanding=True)))
    .order_by(StoredMessage.seq)
)
_SESSION_OVERVIEWS = select(Archive.id, Archive.overview).where(
    Archive.session_pk == bindparam("s"), Archive.overview != ""
)
_OVERVIEWS_OF_SESSION = DriverQuery(_SESSION_OVERVIEWS.order_by(Archive.archive_index))
_OVERVIEWS_AMONG = DriverQuery(
    _SESSION_OVERVIEWS.where(Archive.id.in_(bindparam("ids", expanding=True))).order_by(
        Archive.archive_index
    )
)


def list_archives(db: Session, session: AgentSession, *, texts: bool = True) -> list[Archive]:
    """The session's archives in order; without ``texts`` their long text columns are not read
    and the archives are not attached to ``db`` (read only: reading a text raises)."""
    load = _LIST_ARCHIVES if texts else _LIST_ARCHIVES_WITHOUT_TEXTS
    return load.all(db, {"s": session.id})


def session_archive(db: Session, session: AgentSession, archive_pk: int) -> Archive | None:
    """One archive of the session, its long text columns deferred; None when it is not one."""
    return _SESSION_ARCHIVE_WITHOUT_TEXTS.first(db, {"s": session.id, "id": archive_pk})


def overview_of(db: Session, archive_pk: int) -> str:
    return db.connection().execute(_OVERVIEW, {"id": archive_pk}).scalar_one()


def overview_texts(
    db: Session, session: AgentSession, archive_pks: Sequence[int] | None, only: int | None
) -> dict[int, str]:
    """The non-empty overviews of the session's archives (of ``archive_pks`` when given, of
    ``only`` when given), by id."""
    ids = archive_pks
    if only is not None:
        ids = [only] if ids is None else [pk for pk in ids if pk == only]
    if ids is None:
        rows = _OVERVIEWS_OF_SESSION.in_session(db).all_rows({"s": session.id})
    elif ids:
        rows = _OVERVIEWS_AMONG.in_session(db).all_rows({"s": session.id, "ids": list(ids)})
    else:
        return {}
    return {int(pk): text for pk, text in rows}


def get_archive(db: Session, session: AgentSession, archive_index: int) -> Archive | None:
    stmt = select(Archive).where(
        Archive.session_pk == session.id, Archive.archive_index == archive_index
    )
    return db.execute(stmt).scalar_one_or_none()


def get_archive_by_pk(db: Session, archive_pk: int) -> Archive | None:
    return db.get(Archive, archive_pk)


def latest_completed_before(db: Session, session_pk: int, archive_index: int) -> Archive | None:
    """The newest completed archive older than ``archive_index`` (docs/lifecycle.md, Phase 2 step 1)."""
    stmt = (
        select(Archive)
        .where(
            Archive.session_pk == session_pk,
            Archive.archive_index < archive_index,
            Archive.status == ArchiveStatus.COMPLETED,
        )
        .order_by(Archive.archive_index.desc())
        .limit(1)
    )
    return db.execute(stmt).scalar_one_or_none()


def archive_messages(
    db: Session, archive: Archive, offset: int = 0, limit: int | None = None
) -> list[StoredMessage]:
    stmt = (
        select(StoredMessage)
        .where(StoredMessage.archive_pk == archive.id)
        .order_by(StoredMessage.seq)
        .offset(offset)
        .limit(limit)
    )
    return list(db.execute(stmt).scalars())


def bodies_of_archives(db: Session, archive_pks: Sequence[int]) -> list[Any]:
    """(body, tokens) rows of the archives' messages in sequence order, bodies redacted: plain rows,
    no ORM objects."""
    if not archive_pks:
        return []
    return list(db.connection().execute(_BODIES_OF_ARCHIVES, {"ids": list(archive_pks)}).all())


# What a search reads of a message: where it is, what it says, when it was said.
_SEARCH_FIELDS = (
    StoredMessage.id,
    StoredMessage.archive_pk,
    StoredMessage.seq,
    StoredMessage.role,
    StoredMessage.search_text,
    StoredMessage.created_at,
    StoredMessage.body,
)


class SearchFields(NamedTuple):
    """A message's search fields, by name (as ``iter_archived_texts`` gives its rows)."""

    id: int
    archive_pk: int | None
    seq: int
    role: str
    search_text: str
    created_at: datetime
    body: str


_MESSAGES_BY_IDS = DriverQuery(
    select(*_SEARCH_FIELDS).where(StoredMessage.id.in_(bindparam("ids", expanding=True))),
    convert_results=True,
)


def messages_by_ids(db: Session, ids: Sequence[int]) -> dict[int, SearchFields]:
    """The search fields of these messages."""
    if not ids:
        return {}
    found = _MESSAGES_BY_IDS.in_session(db).all_rows({"ids": list(ids)})
    return {row[0]: SearchFields(*row) for row in found}


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
    stmt = select(StoredMessage).where(
        StoredMessage.session_pk == session.id,
        StoredMessage.archive_pk.is_not(None),
        StoredMessage.seq.in_(sorted(wanted)),
    )
    return {row.seq: row for row in db.execute(stmt).scalars()}


def add_search_facts(db: Session, rows: Sequence[MessageSearch]) -> None:
    """Insert or replace what Phase 2 learned about archived messages (a re-run replaces)."""
    if not rows:
        return
    db.execute(
        delete(MessageSearch).where(MessageSearch.message_id.in_([r.message_id for r in rows]))
    )
    db.add_all(rows)
    db.flush()


def with_search_facts(db: Session, message_ids: Sequence[int]) -> set[int]:
    """Which of these messages already have search facts."""
    found: set[int] = set()
    for start in range(0, len(message_ids), 500):
        chunk = list(message_ids[start : start + 500])
        found.update(
            db.execute(
                select(MessageSearch.message_id).where(MessageSearch.message_id.in_(chunk))
            ).scalars()
        )
    return found


def search_stats(db: Session, session_pk: int) -> SessionSearchStats | None:
    return db.get(SessionSearchStats, session_pk)


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


def term_frequencies(db: Session, session_pk: int, terms: Sequence[str]) -> dict[str, int]:
    """Stored document frequencies of the given terms in one session (absent terms are left out)."""
    found: dict[str, int] = {}
    for start in range(0, len(terms), 500):
        chunk = list(terms[start : start + 500])
        stmt = select(SessionTerm.term, SessionTerm.documents).where(
            SessionTerm.session_pk == session_pk, SessionTerm.term.in_(chunk)
        )
        found.update({term: int(count) for term, count in db.execute(stmt)})
    return found
