"""POST /archives/search (keyword) over 1k → 10k → 100k archived messages in one session.

Databases are built in process through the app's own code paths, in bulk: messages are sanitized,
fingerprinted and rendered like capture does, inserted with ``sessions.repository.insert_messages``,
indexed with the dialect's ``index_messages`` and archived by ``commit_phase1`` every 1,000
messages. The server then runs on the file with the Phase 2 worker off (archives stay pending,
which search does not care about) and the queries go over loopback HTTP.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from app.core.canonical_json import compact_json
from app.core.clock import utcnow
from app.core.messages import message_text, message_tokens, role_of
from app.db.engine import create_db_engine
from app.db.uow import UnitOfWork
from app.sessions import repository as sessions_repo
from app.sessions.commit import commit_phase1
from app.sessions.fingerprint import message_fingerprint
from app.sessions.identity import SessionIdentity
from app.sessions.sanitize import sanitize_message_for_capture
from app.settings import Settings
from bench.common import (
    JSON_HEADERS,
    Config,
    Row,
    Server,
    check,
    encode,
    fmt_ms,
    migrated_db,
    summary,
    temp_dir,
)
from bench.workload import (
    CHINESE_TERM,
    COMMON_TERM,
    SELECTIVE_TERM,
    SHORT_RARE_TERM,
    Message,
    search_corpus,
)

TENANT = "default"
ARCHIVE_SIZE = 1000
TARGET_MS = 50

# (row label, query, what to expect)
QUERIES = [
    ("selective", SELECTIVE_TERM, "5 hits"),
    ("common", COMMON_TERM, "~1/3 of msgs"),
    ("2-char", SHORT_RARE_TERM, "10 hits, below index"),
    ("chinese", CHINESE_TERM, "~1% of msgs"),
]


def add_archived_session(uow: UnitOfWork, session_id: str, messages: list[Message]) -> None:
    """Store ``messages`` in a new session and archive them, ``ARCHIVE_SIZE`` per archive."""
    ident = SessionIdentity(TENANT, session_id)
    with uow.write() as db:
        sessions_repo.add_session(db, ident.new_session_row(0, utcnow()))
    for start in range(0, len(messages), ARCHIVE_SIZE):
        chunk = messages[start : start + ARCHIVE_SIZE]
        with uow.write() as db:
            session = sessions_repo.find_session(db, TENANT, session_id)
            assert session is not None
            rows = []
            for offset, raw in enumerate(chunk):
                clean = sanitize_message_for_capture(raw)
                if clean is None:
                    raise RuntimeError("benchmark message dropped by sanitation")
                rows.append(
                    sessions_repo.NewMessageRow(
                        seq=session.last_seq + offset + 1,
                        role=role_of(clean),
                        body=compact_json(clean),
                        search_text=message_text(clean),
                        tokens=message_tokens(clean),
                        fingerprint=message_fingerprint(clean),
                    )
                )
            ids = sessions_repo.insert_messages(db, session, rows, utcnow())
            uow.dialect.index_messages(db, zip(ids, (r.search_text for r in rows), strict=True))
            session.last_seq += len(rows)
            session.live_count += len(rows)
            session.total_message_count += len(rows)
            outcome = commit_phase1(db, session, 0, utcnow())
            if outcome.messages_archived != len(rows):
                raise RuntimeError(f"archived {outcome.messages_archived} of {len(rows)}")


def build_db(path: Path, sessions: dict[str, int]) -> float:
    """A database with one archived session per entry (id → message count); seconds taken."""
    started = time.perf_counter()
    migrated_db(path)
    engine = create_db_engine(Settings(database_url=f"sqlite:///{path}", db={"sqlite_synchronous": "NORMAL"}))
    try:
        uow = UnitOfWork(engine)
        for seed, (session_id, count) in enumerate(sessions.items()):
            add_archived_session(uow, session_id, search_corpus(count, seed=7 + seed))
        with engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        engine.dispose()
    return time.perf_counter() - started


def _query(client: httpx.Client, session_id: str, query: str) -> dict:
    body = encode({"sessionId": session_id, "query": query, "mode": "keyword"})
    return check(client.post("/archives/search", content=body, headers=JSON_HEADERS))


def _expected_ok(label: str, result: dict, size: int) -> bool:
    if label == "selective":
        return result["count"] == min(5, size)
    if label == "2-char":
        return result["count"] == min(10, size)
    return result["count"] > 0


def measure_size(tmp: Path, size: int, iterations: int, small_neighbour: bool) -> tuple[dict[str, list[float]], dict[str, list[float]], list[str]]:
    """Per query label: latencies in the ``size`` session (and in a 1k neighbour session)."""
    sessions = {f"search-{size}": size}
    if small_neighbour:
        sessions["search-neighbour-1k"] = 1000
    path = tmp / f"search-{size}.db"
    build_s = build_db(path, sessions)
    info = [f"{size:,}-message database built in {build_s:.1f} s"]
    results: dict[str, list[float]] = {}
    neighbour: dict[str, list[float]] = {}
    with Server(tmp, path, {"CE_WORKER__ENABLED": "false"}) as server, server.client() as client:
        for label, query, _ in QUERIES:
            for sid, sink in [(f"search-{size}", results)] + ([("search-neighbour-1k", neighbour)] if small_neighbour else []):
                first = _query(client, sid, query)  # warm-up, and a correctness check
                expected_size = size if sink is results else 1000
                if not _expected_ok(label, first, expected_size):
                    info.append(f"UNEXPECTED result for {label!r} in {sid}: count={first['count']}")
                body = encode({"sessionId": sid, "query": query, "mode": "keyword"})
                samples: list[float] = []
                for _ in range(iterations):
                    started = time.perf_counter()
                    response = client.post("/archives/search", content=body, headers=JSON_HEADERS)
                    samples.append((time.perf_counter() - started) * 1000)
                    check(response)
                sink[label] = samples
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return results, neighbour, info


def run(cfg: Config) -> list[Row]:
    sizes = [1000, 10000] if cfg.quick else [1000, 10000, 100000]
    iterations = cfg.pick(30, 10)
    largest = sizes[-1]
    per_size: dict[int, dict[str, list[float]]] = {}
    neighbour: dict[str, list[float]] = {}
    info: list[str] = []
    with temp_dir("search") as tmp:
        for size in sizes:
            results, near, notes = measure_size(tmp, size, iterations, small_neighbour=size == largest and size > 1000)
            per_size[size] = results
            neighbour = near or neighbour
            info += notes
    rows = []
    for label, query, expect in QUERIES:
        p50, p99 = summary(per_size[largest][label])
        row = Row(
            name=f"archive search: {label}",
            workload=f"{largest:,} archived msgs, {query!r} ({expect})",
            p50_ms=p50,
            p99_ms=p99,
            target=f"p50<={TARGET_MS} ms",
            figure=p50,
            target_value=TARGET_MS,
        )
        growth = " -> ".join(f"{n // 1000}k: {fmt_ms(summary(per_size[n][label])[0])}" for n in sizes)
        row.notes.append(f"growth p50 ms {growth}")
        if label in neighbour:
            row.notes.append(
                f"a 1k-message session in the same {largest // 1000}k database: p50 {fmt_ms(summary(neighbour[label])[0])} ms"
            )
        rows.append(row)
    rows[0].notes = info + rows[0].notes
    return rows
