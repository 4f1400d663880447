"""The session row's live tokens (migration 0013), on both databases: after any sequence of
captured turns, duplicates, reconciled tails and commits, they equal the sum over the session's
live messages, which is what the active tokens behind ``compactRecommended`` used to read."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from app.core.clock import utcnow
from app.db.uow import UnitOfWork
from app.sessions import repository as repo
from app.sessions.capture import TurnInput, capture_turn
from app.sessions.commit import commit_phase1
from app.sessions.identity import SessionIdentity
from app.settings import Settings
from tests.helpers.databases import migrated_engine

IDENT = SessionIdentity("t", "s")


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    with migrated_engine(request, request.param, tmp_path) as built:
        yield built


def message(n: int, rng: random.Random) -> dict[str, object]:
    role = "user" if n % 2 == 0 else "assistant"
    return {"role": role, "content": "word " * rng.randint(1, 400), "timestamp": 1_760_000 + n}


def live_sum(engine: Engine) -> tuple[int, int]:
    """(the kept counter, the sum over the live messages)."""
    with engine.connect() as conn:
        kept = conn.execute(text("SELECT live_tokens FROM agent_sessions")).scalar_one()
        summed = conn.execute(
            text("SELECT COALESCE(SUM(tokens), 0) FROM messages WHERE archive_pk IS NULL")
        ).scalar_one()
    return int(kept), int(summed)


def test_live_tokens_follow_turns_and_commits(engine: Engine) -> None:
    uow, settings = UnitOfWork(engine), Settings()
    rng = random.Random(13)
    history: list[dict[str, object]] = []
    commits = 0
    for step in range(40):
        new = [message(len(history) + i, rng) for i in range(rng.randint(1, 5))]
        # The host's whole transcript each turn: earlier messages come back as duplicates.
        capture_turn(uow, settings, TurnInput(IDENT, history + new, len(history)))
        history += new
        if step % 7 == 6:
            with uow.write() as db:
                session = repo.find_session(db, "t", "s")
                assert session is not None
                outcome = commit_phase1(db, session, rng.randint(0, 6), utcnow())
                commits += outcome.archived
        kept, summed = live_sum(engine)
        assert kept == summed
    assert commits >= 3 and summed > 0
