"""The candidates of a ranked archive search, written once for both databases: the loop that takes
each source's message ids within a budget, and the SQL of a session's archived scope, which is
the same on both. A backend supplies the id queries of its sources and the read of their rows."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from typing import Any, cast

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.db.shared.rows import CandidateRow, TimeRange

# The columns of a CandidateRow (``candidate_row``); the backend appends which ids.
CANDIDATE_SELECT = (
    "SELECT m.id, m.archive_pk, m.seq, m.role, m.search_text, "
    "coalesce(x.dates, ''), x.said_at_ms FROM messages m "
    "LEFT JOIN message_search x ON x.message_id = m.id WHERE "
)


def archived(archive_pk: int | None, alias: str = "m") -> str:
    """SQL: the row is archived (in archive ``:a`` when one is given): live messages are never
    searched."""
    return (
        f"AND {alias}.archive_pk = :a"
        if archive_pk is not None
        else f"AND {alias}.archive_pk IS NOT NULL"
    )


def candidate_scope(archive_pk: int | None, window: TimeRange) -> tuple[str, str]:
    """SQL (join, conditions) of messages ``m`` of session ``:s``, archived, said within
    ``:since``/``:until`` when their time is known: a message without search facts yet has no
    known time here, and the caller filters it."""
    joined = "LEFT JOIN message_search x ON x.message_id = m.id " if window != (None, None) else ""
    where = f"m.session_pk = :s {archived(archive_pk)} "
    if window[0] is not None:
        where += "AND (x.said_at_ms IS NULL OR x.said_at_ms >= :since) "
    if window[1] is not None:
        where += "AND (x.said_at_ms IS NULL OR x.said_at_ms <= :until) "
    return joined, where


def scope_params(session_pk: int, archive_pk: int | None, window: TimeRange) -> dict[str, object]:
    """The parameters of ``candidate_scope``."""
    return {"s": session_pk, "a": archive_pk, "since": window[0], "until": window[1]}


def dated_source(
    head: str, params: dict[str, object], dates: list[str], position: str
) -> tuple[str, dict[str, object]]:
    """The id query of the messages mentioning any of the days (``position``: the database's
    substring function, ``instr`` or ``strpos``; both take (text, needle))."""
    found = " OR ".join(f"{position}(d.dates, :d{i}) > 0" for i in range(len(dates)))
    dated = (
        "AND m.id IN (SELECT d.message_id FROM message_search d "
        f"WHERE d.session_pk = :s AND ({found}))"
    )
    return head + dated, {**params, **{f"d{i}": day for i, day in enumerate(dates)}}


class MessageCandidates(ABC):
    """``message_candidates`` over a backend's id queries and row read."""

    def message_candidates(
        self,
        db: Session,
        session_pk: int,
        literals: list[str],
        dates: list[str],
        archive_pk: int | None,
        window: TimeRange = (None, None),
        budget: int | None = None,
    ) -> list[CandidateRow]:
        """Archived messages of one session whose text contains any literal (lowercase) or whose
        mentioned days include any of ``dates``, said within ``window`` when their time is known;
        nothing of other sessions is read. Literals are taken in the given order (most selective
        first) and at most ``budget`` messages are returned: a literal whose messages do not all
        fit brings its most recent ones, then the taking stops."""
        ids: dict[int, None] = {}
        for sql, params in self._candidate_sources(
            db, session_pk, literals, dates, archive_pk, window
        ):
            room = None if budget is None else budget - len(ids)
            if room is not None and room <= 0:
                break
            limit = "" if room is None else f" ORDER BY id DESC LIMIT {int(room)}"
            ids.update(
                (int(row_id), None)
                for (row_id,) in self._rows(db, sql + limit, params)
                if row_id not in ids
            )
        return self._candidate_rows(db, list(ids))

    def _rows(self, db: Session, sql: str, params: dict[str, object]) -> Iterable[tuple[Any, ...]]:
        """The rows of one of this backend's statements (named ``:parameters``) in ``db``'s
        transaction."""
        return cast(Iterable[tuple[Any, ...]], db.execute(text(sql), params))

    @abstractmethod
    def _candidate_sources(
        self,
        db: Session,
        session_pk: int,
        literals: list[str],
        dates: list[str],
        archive_pk: int | None,
        window: TimeRange,
    ) -> Iterator[tuple[str, dict[str, object]]]:
        """The id queries of ``message_candidates``, in the order they are taken (each selects one
        column named ``id``, a message's id; ``ORDER BY id DESC`` and a limit are appended)."""

    @abstractmethod
    def _candidate_rows(self, db: Session, ids: list[int]) -> list[CandidateRow]:
        """The candidate rows of these message ids."""
