"""What every command needs: settings, the database, the memory service, and plain output."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import httpx

from app.db.engine import create_db_engine
from app.db.migrate import current_and_head
from app.db.uow import UnitOfWork
from app.main import build_embedder
from app.memory.service import MemoryService
from app.memory.store.embedding_cache import CachedEmbedder
from app.memory.store.preparing import EmbeddingLimits
from app.settings import Settings

EXIT_OK = 0
EXIT_PROBLEM = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class CommandError(Exception):
    """A problem the operator can act on: printed as one line, exit status 1."""


@contextmanager
def open_database(settings: Settings, *, require_current: bool = True) -> Iterator[UnitOfWork]:
    """A unit of work over the configured database; refuses one whose migrations are behind
    (commands never migrate silently: ``migrate`` does that)."""
    engine = create_db_engine(settings)
    try:
        if require_current:
            current, head = current_and_head(engine)
            if current != head:
                raise CommandError(
                    f"the database is at migration {current or 'none'}, the code at {head}: "
                    "run `context-engine migrate` first"
                )
        yield UnitOfWork(engine)
    finally:
        engine.dispose()


@asynccontextmanager
async def memory_service(settings: Settings, uow: UnitOfWork) -> AsyncIterator[MemoryService]:
    """The memory service with the configured embedder (through the vector cache)."""
    async with httpx.AsyncClient(timeout=settings.embedding.timeout_s) as http:
        embedder = build_embedder(settings, http)
        cached = CachedEmbedder(uow, embedder) if embedder is not None else None
        try:
            yield MemoryService(uow, cached, EmbeddingLimits.of(settings.embedding))
        finally:
            if cached is not None:
                await cached.drain()  # query vectors still being cached, before the database closes


def print_json_line(record: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")


def print_listing(
    records: list[dict[str, Any]],
    columns: list[tuple[str, str]],
    *,
    as_json: bool,
    empty: str,
    clip: dict[str, int] | None = None,
) -> None:
    """A list command's output: one JSON object per line, or a table (``clip`` shortens the named
    columns of the table only), or ``empty`` when there is nothing."""
    if as_json:
        for record in records:
            print_json_line(record)
    elif records:
        clipped = [
            {**r, **{k: str(r.get(k) or "")[:n] for k, n in (clip or {}).items()}} for r in records
        ]
        print_table(clipped, columns)
    else:
        sys.stdout.write(empty + "\n")


def print_table(rows: list[dict[str, Any]], columns: list[tuple[str, str]]) -> None:
    """A plain aligned table on stdout: (key, header) per column."""
    cells = [[header for _, header in columns]]
    cells += [
        ["" if row.get(key) is None else str(row.get(key)) for key, _ in columns] for row in rows
    ]
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    for line in cells:
        sys.stdout.write(
            "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
            + "\n"
        )
