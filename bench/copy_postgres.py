"""``context-engine copy`` at the size of the scale-out acceptance: a SQLite database of 10,000
messages (archived, with search facts and vectors) and 10,000 memories (a chunk, a vector and an
audit row each) copied into PostgreSQL and verified; prints the time of each part.

    .venv/bin/python -m bench.copy_postgres [--messages N] [--memories N] [--url postgresql+psycopg://…]

Without ``--url`` a throwaway PostgreSQL server is started (tests/helpers/postgres.py: PostgreSQL
15 with pgvector, as ``make test`` installs it). The rows are written through the SQLite dialect's
own index methods, as the service writes them, but without the HTTP layer, so that building the
source takes seconds. Not part of ``python -m bench``: it needs a PostgreSQL server.
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from contextlib import ExitStack
from datetime import UTC, datetime
from typing import Any

import numpy as np

from app.db.base import Base
from app.db.engine import create_db_engine
from app.db.migrate import upgrade_to_head
from app.db.uow import UnitOfWork
from app.dbcopy.endpoints import open_endpoints
from app.dbcopy.run import copy_database
from app.dbcopy.verify import verify_copy
from app.memory.records import owner_key
from app.search.text.words import chunks_with_words
from app.settings import Settings
from bench.common import temp_dir
from tests.helpers import postgres

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
SESSIONS = 20
PER_ARCHIVE = 50
DIMENSIONS = 384
WORDS = "deploy rollback kumquat orchard database staging review friday 部署 失败 回滚".split()


def _vectors(count: int, seed: int) -> np.ndarray:
    values = np.random.default_rng(seed).standard_normal((count, DIMENSIONS)).astype(np.float32)
    return values / np.linalg.norm(values, axis=1, keepdims=True)


def _text(i: int) -> str:
    return " ".join(WORDS[(i * k) % len(WORDS)] for k in range(1, 9)) + f" item {i}"


def _session_rows() -> list[dict[str, Any]]:
    counters = dict.fromkeys(
        ("live_count", "total_message_count", "last_seq", "pending_tokens", "commit_count"), 0
    )
    return [
        {"id": pk, "tenant_id": "t", "session_id": f"s{pk}", "agent_id": "main", "user_id": "u"}
        | counters
        | {"keep_recent_count": 10, "archive_count": 0, "llm_prompt_tokens": 0}
        | {"llm_completion_tokens": 0, "created_at": NOW, "updated_at": NOW}
        for pk in range(1, SESSIONS + 1)
    ]


def _archive(pk: int, session_pk: int) -> dict[str, Any]:
    return {
        "id": pk,
        "tenant_id": "t",
        "session_pk": session_pk,
        "archive_index": pk,
        "status": "completed",
        "overview": f"overview {pk}: {_text(pk)}",
        "abstract": "",
        "overview_tokens": 10,
        "message_count": PER_ARCHIVE,
        "message_tokens": 500,
        "first_seq": 1,
        "last_seq": PER_ARCHIVE,
        "keep_recent_count": 0,
        "messages_indexed": True,
        "created_at": NOW,
    }


def build_messages(uow: UnitOfWork, count: int) -> None:
    """Sessions, an archive per 50 messages, messages (in the text index) with search facts and
    vectors."""
    vectors = _vectors(count, 1)
    insert = Base.metadata.tables
    with uow.write() as db:
        db.execute(insert["agent_sessions"].insert(), _session_rows())
        archives = [
            _archive(a + 1, a % SESSIONS + 1)
            for a in range((count + PER_ARCHIVE - 1) // PER_ARCHIVE)
        ]
        db.execute(insert["archives"].insert(), archives)
        for archive in archives:
            uow.storage.text.index_archive_overview(db, archive["id"], archive["overview"])
        rows, facts = [], []
        for i in range(count):
            archive = archives[i // PER_ARCHIVE]
            body = f'{{"role":"user","content":"{_text(i)}"}}'
            rows.append(
                {"id": i + 1, "tenant_id": "t", "session_pk": archive["session_pk"]}
                | {"archive_pk": archive["id"], "seq": i + 1, "role": "user", "body": body}
                | {
                    "search_text": _text(i),
                    "tokens": 12,
                    "fingerprint": f"{i:064x}",
                    "created_at": NOW,
                }
            )
            facts.append(
                {"message_id": i + 1, "tenant_id": "t", "session_pk": archive["session_pk"]}
                | {"said_at_ms": 1_760_000_000_000 + i, "dates": "", "embedding_model": "bench"}
                | {"token_count": 12}
            )
        db.execute(insert["messages"].insert(), rows)
        # As Phase 2 leaves an archive: its messages in the text index, the archive marked so.
        uow.storage.text.index_messages(db, [(row["id"], row["search_text"]) for row in rows])
        db.execute(insert["message_search"].insert(), facts)
        uow.storage.text.index_messages(db, [(r["id"], r["search_text"]) for r in rows])
        uow.storage.message_vectors.store_message_vectors(
            db,
            [
                (f["message_id"], f["session_pk"], f["said_at_ms"], vectors[i].tolist())
                for i, f in enumerate(facts)
            ],
        )


def build_memories(uow: UnitOfWork, count: int) -> None:
    """Memories of 10 owners, one chunk, vector and audit row each, and two passage vectors."""
    vectors, passage_vectors = _vectors(count, 2), _vectors(2 * count, 3)
    tables = Base.metadata.tables
    memories, chunks, audits, passages = [], [], [], []
    for i in range(count):
        memory_id = f"{i:08x}-0000-4000-8000-000000000000"
        owner = f"u{i % 10}"
        content = f"fact {i}: {_text(i)}"
        memories.append(
            {"id": memory_id, "tenant_id": "t", "owner_kind": "user", "owner_id": owner}
            | {"uri": f"viking://user/{owner}/memories/entities/{i}.md", "category": "entities"}
            | {"title": f"Fact {i}", "abstract": content, "content": content, "confidence": 0.9}
            | {"sensitivity": "allowed", "priority": 0, "version": 1, "source_json": "{}"}
            | {"embedding_model": "bench", "created_at": NOW, "updated_at": NOW}
        )
        chunks.append(
            {"id": i + 1, "tenant_id": "t", "memory_id": memory_id, "chunk_index": 0}
            | {"text": content, "embedding_model": "bench"}
        )
        passages += [
            {"chunk_id": i + 1, "passage_index": j, "tenant_id": "t"}
            | {"embedding": passage_vectors[2 * i + j].astype("<f4").tobytes()}
            for j in range(2)
        ]
        audits.append(
            {"id": i + 1, "tenant_id": "t", "memory_id": memory_id, "action": "ADD", "actor": "api"}
            | {"reason": "", "after_json": f'{{"content":"{content}"}}', "created_at": NOW}
        )
    with uow.write() as db:
        db.execute(tables["memories"].insert(), memories)
        db.execute(tables["memory_chunks"].insert(), chunks)
        db.execute(tables["memory_audit"].insert(), audits)
        db.execute(tables["memory_passage_vectors"].insert(), passages)
        uow.storage.memory_words.index_memory_chunks(
            db,
            chunks_with_words(
                [
                    (c["id"], owner_key("t", ("user", m["owner_id"])), f"{m['title']}\n{c['text']}")
                    for m, c in zip(memories, chunks, strict=True)
                ]
            ),
        )
        uow.storage.memory_vectors.store_chunk_vectors(
            db,
            [
                (c["id"], owner_key("t", ("user", m["owner_id"])), vectors[i].tolist())
                for i, (m, c) in enumerate(zip(memories, chunks, strict=True))
            ],
        )


class _Quiet:
    def advance(self, count: int) -> None:
        pass

    def close(self, note: str = "") -> None:
        pass


def run(messages: int, memories: int, url: str) -> dict[str, float]:
    """Build the source, copy, verify; seconds of each part."""
    timings: dict[str, float] = {}
    with temp_dir("copy") as folder:
        source_url = f"sqlite:///{folder / 'source.db'}"
        engine = create_db_engine(Settings(database_url=source_url))
        upgrade_to_head(engine)
        started = time.perf_counter()
        uow = UnitOfWork(engine)
        build_messages(uow, messages)
        build_memories(uow, memories)
        engine.dispose()
        timings["build source"] = time.perf_counter() - started
        with open_endpoints(Settings(), source_url, url, migrate=True) as ends:
            started = time.perf_counter()
            copy_database(ends, lambda _t, _n: _Quiet())
            timings["copy"] = time.perf_counter() - started
            started = time.perf_counter()
            checks = verify_copy(ends)
            timings["verify"] = time.perf_counter() - started
    failed = [c.table for c in checks if not c.ok]
    if failed:
        raise SystemExit(f"verification failed: {', '.join(failed)}")
    return timings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument(
        "--url", help="a PostgreSQL database to copy into (default: a throwaway server)"
    )
    args = parser.parse_args(argv)
    with ExitStack() as stack:
        url = args.url or _throwaway_database(stack)
        timings = run(args.messages, args.memories, url)
    out = io.StringIO()
    out.write(f"copy of {args.messages} messages and {args.memories} memories into PostgreSQL:\n")
    for part, seconds in timings.items():
        out.write(f"  {part:<13} {seconds:6.1f} s\n")
    sys.stdout.write(out.getvalue())
    return 0


def _throwaway_database(stack: ExitStack) -> str:
    server = stack.enter_context(postgres.postgres_server())
    return server.create_database()


if __name__ == "__main__":
    raise SystemExit(main())
