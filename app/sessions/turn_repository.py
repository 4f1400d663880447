"""SQL of the turn commits: the record that a host turn (/commit-turn) was stored, once per
advancement key. Repositories never commit."""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime
from typing import cast

from sqlalchemy import Table, bindparam, select
from sqlalchemy.orm import Session

from app.db.driver_load import DriverLoad
from app.db.driver_query import DriverQuery
from app.db.models import AgentSession, TurnCommit
from app.sessions.repository import SESSION_BY_KEYS, find_session, row_values

# The session row, led by whether it already stored the turn: a turn asks both first, and one
# statement costs about half of two (the driver's cost per statement is most of either's).
_TURN_STORED = (
    select(TurnCommit.id)
    .where(TurnCommit.session_pk == AgentSession.id, TurnCommit.advancement_key == bindparam("key"))
    .correlate(AgentSession)
    .exists()
    .label("turn_stored")
)
_FIND_SESSION_WITH_TURN = DriverLoad(AgentSession, SESSION_BY_KEYS, leading=(_TURN_STORED,))


def find_session_and_turn(
    db: Session, tenant_id: str, session_id: str, advancement_key: str | None
) -> tuple[AgentSession | None, bool]:
    """The session, and whether it already stored the turn with this advancement key (False
    without a key)."""
    if advancement_key is None:
        return find_session(db, tenant_id, session_id), False
    params = {"tenant": tenant_id, "sid": session_id, "key": advancement_key}
    found = _FIND_SESSION_WITH_TURN.all_led(db, params)
    if not found:
        return None, False
    (stored,), session = found[0]
    return session, bool(stored)


@dataclass(frozen=True, slots=True)
class NewTurnCommit:
    tenant_id: str
    session_pk: int
    advancement_key: str
    first_seq: int | None
    last_seq: int | None
    admission_entry_id: str | None
    terminal_entry_id: str | None
    ingested: int
    created_at: datetime


_INSERT_TURN_COMMIT = DriverQuery(
    cast(Table, TurnCommit.__table__).insert(), [f.name for f in fields(NewTurnCommit)]
)


def add_turn_commit(db: Session, row: NewTurnCommit) -> None:
    """One insert statement: the row is not read back, so the ORM's flush is not needed."""
    _INSERT_TURN_COMMIT.in_session(db).run(row_values(row))
