"""Commit Phase 1 of 500 live messages, in process: the cost a commit adds inside the request.

A template database is prepared once with ``capture_turn`` (two sessions of N live messages, no
automatic commit). Every iteration copies the template to a fresh file, opens an engine on it and
commits the first session untimed (a long-running server has its connections open and its SQL
compiled already), then times one write transaction on the second: find the session,
``commit_phase1`` (keep 10), commit. The figure is the whole transaction (what the request waits for); the
``commit_phase1`` call alone is reported beside it.
"""

from __future__ import annotations

import gc
import shutil
import time
from pathlib import Path

from app.core.clock import utcnow
from app.db.engine import create_db_engine
from app.db.uow import UnitOfWork
from app.sessions import repository as sessions_repo
from app.sessions.capture import TurnInput, capture_turn
from app.sessions.commit import commit_phase1
from app.sessions.identity import SessionIdentity
from app.settings import Settings
from bench.common import Config, Row, fmt_ms, migrated_db, summary, temp_dir
from bench.workload import Conversation

KEEP = 10
TENANT = "default"
SESSION = "commit-bench"
WARM_SESSION = "commit-warm-up"


def _settings(path: Path) -> Settings:
    return Settings(
        database_url=f"sqlite:///{path}",
        commit={"token_threshold_ratio": 1.0, "default_token_budget": 10**12},
    )


def prepare_template(path: Path, live: int) -> Path:
    migrated_db(path)
    settings = _settings(path)
    engine = create_db_engine(settings)
    uow = UnitOfWork(engine)
    for seed, session_id in enumerate((WARM_SESSION, SESSION)):
        conv = Conversation(seed=77 + seed)
        snapshot = []
        ident = SessionIdentity(TENANT, session_id)
        while len(snapshot) < live:
            new = conv.messages(min(500, live - len(snapshot)))
            result = capture_turn(uow, settings, TurnInput(ident, snapshot + new, len(snapshot)))
            if result.ingested != len(new) or result.commit.triggered:
                raise RuntimeError(f"template capture went wrong: {result}")
            snapshot += new
    with engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    engine.dispose()
    return path


def measure_once(template: Path, workdir: Path, index: int, live: int) -> tuple[float, float]:
    """(transaction ms, commit_phase1 ms) on a fresh copy of the template."""
    path = workdir / f"copy-{index}.db"
    shutil.copyfile(template, path)
    engine = create_db_engine(_settings(path))
    try:
        uow = UnitOfWork(engine)
        with uow.write() as db:  # warm the connection and the compiled-SQL cache, untimed
            warm = sessions_repo.find_session(db, TENANT, WARM_SESSION)
            if warm is None or not commit_phase1(db, warm, KEEP, utcnow()).archived:
                raise RuntimeError("warm-up commit failed")
        gc.collect()
        started = time.perf_counter()
        with uow.write() as db:
            session = sessions_repo.find_session(db, TENANT, SESSION)
            if session is None:
                raise RuntimeError("template session missing")
            inner = time.perf_counter()
            outcome = commit_phase1(db, session, KEEP, utcnow())
            inner_ms = (time.perf_counter() - inner) * 1000
        total_ms = (time.perf_counter() - started) * 1000
        # The split may move a few messages earlier so a tool call stays with its result.
        if not outcome.archived or not live - KEEP - 8 <= outcome.messages_archived <= live - KEEP:
            raise RuntimeError(
                f"commit archived {outcome.messages_archived} of {live - KEEP}: {outcome}"
            )
        return total_ms, inner_ms
    finally:
        engine.dispose()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)


def measure(
    template: Path, workdir: Path, live: int, iterations: int
) -> tuple[list[float], list[float]]:
    measure_once(template, workdir, -1, live)  # warm imports and statement caches
    totals: list[float] = []
    inners: list[float] = []
    for i in range(iterations):
        total_ms, inner_ms = measure_once(template, workdir, i, live)
        totals.append(total_ms)
        inners.append(inner_ms)
    return totals, inners


def run(cfg: Config) -> list[Row]:
    live = 500
    iterations = cfg.pick(40, 10)
    growth_sizes = [100, 2000] if not cfg.quick else []
    with temp_dir("commit") as tmp:
        template = prepare_template(tmp / f"template-{live}.db", live)
        totals, inners = measure(template, tmp, live, iterations)
        p50, p99 = summary(totals)
        row = Row(
            name="commit phase 1",
            workload=f"{live} live msgs, keep {KEEP}, {iterations} fresh copies",
            p50_ms=p50,
            p99_ms=p99,
            target="<=20 ms (p50)",
            figure=p50,
            target_value=20,
            samples=len(totals),
        )
        inner50, inner99 = summary(inners)
        row.notes.append(
            f"whole write transaction (find session + commit_phase1 + COMMIT); "
            f"commit_phase1 alone p50 {fmt_ms(inner50)} / p99 {fmt_ms(inner99)} ms"
        )
        growth = {live: p50}
        for size in growth_sizes:
            grown = prepare_template(tmp / f"template-{size}.db", size)
            growth[size] = summary(measure(grown, tmp, size, max(5, iterations // 4))[0])[0]
        if len(growth) > 1:
            row.notes.append(
                "growth (p50 by live messages): "
                + " -> ".join(f"{n}: {fmt_ms(growth[n])} ms" for n in sorted(growth))
            )
    return [row]
