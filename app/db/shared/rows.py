"""The rows the storage seams' searches return (app/db/seams.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple


class TextHit(NamedTuple):  # tuples, built by the hundred per search (see CandidateRow)
    row_id: int
    score: float | None


class CandidateRow(NamedTuple):
    """An archived message that may answer a ranked query, with what scoring needs. A tuple: a
    ranked search builds up to a thousand, and a tuple is cheaper to build than a frozen dataclass
    (bench/RESULTS.md, Measurements behind the code)."""

    row_id: int
    archive_pk: int
    seq: int
    role: str
    text: str
    dates: str
    # From the search facts, when Phase 2 wrote them: the host's timestamp in ms, or the time the
    # message was stored when the host sent none.
    said_at_ms: int | None = None


def candidate_row(row: Sequence[Any]) -> CandidateRow:
    """A CandidateRow from a row of ``CANDIDATE_SELECT`` (app/db/shared/message_candidates.py)."""
    return CandidateRow(int(row[0]), int(row[1]), int(row[2]), row[3], row[4] or "", row[5], row[6])


# (since, until) in epoch milliseconds; None leaves that side open.
TimeRange = tuple[int | None, int | None]
