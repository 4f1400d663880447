"""``memories export|import``: JSON Lines, streamed, embedded in batches, with a progress bar.

An import validates every line first (from a file), so a bad line writes nothing; then it stores
batch by batch, each in one transaction. Interrupted, it keeps the batches already stored, and the
same command run again skips what is there and carries on.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Iterator
from typing import IO

from app.api.schemas.memories import ImportRecord
from app.commands.progress import ProgressBar
from app.commands.runtime import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    CommandError,
    memory_service,
    open_database,
)
from app.db.uow import UnitOfWork
from app.errors import InvalidArgument
from app.memory.admin.operator import count_memories, export_records, import_batch
from app.memory.admin.transfer import parse_record
from app.memory.records import MemoryRecord
from app.settings import Settings

DEFAULT_BATCH = 256


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("memories", help="export or import memories as JSON Lines")
    actions = parser.add_subparsers(dest="action", required=True)
    export = actions.add_parser(
        "export",
        help="every memory of a tenant, one JSON object per line",
        description="The same records as GET /memories/export, for every user and "
        "agent of the tenant, superseded and expired ones included.",
    )
    export.add_argument("--tenant", default="default", help="whose memories (default: default)")
    export.add_argument("--output", "-o", help="write to this file instead of stdout")
    export.set_defaults(run=run_export)
    load = actions.add_parser(
        "import",
        help="load an export (resumable: run it again after an interruption)",
        description="Store the records of an export in batches: one embedding call and "
        "one transaction per batch. Records already stored at the same "
        "version are skipped, so running it again resumes.",
    )
    load.add_argument("file", help="the JSON Lines file, or - for stdin")
    load.add_argument("--tenant", default="default", help="into whose memories (default: default)")
    load.add_argument(
        "--batch",
        type=int,
        default=DEFAULT_BATCH,
        help=f"records per batch (default {DEFAULT_BATCH})",
    )
    load.set_defaults(run=run_import)


def run_export(args: argparse.Namespace) -> int:
    with open_database(Settings()) as uow:
        bar = ProgressBar("export", count_memories(uow, args.tenant))
        out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout  # noqa: SIM115
        try:
            for record in export_records(uow, args.tenant):
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
                bar.advance(1)
        finally:
            if out is not sys.stdout:
                out.close()
    bar.close("done")
    return EXIT_OK


def run_import(args: argparse.Namespace) -> int:
    settings = Settings()
    total = _validate_file(args.file) if args.file != "-" else None
    bar = ProgressBar("import", total)
    counts = {"imported": 0, "skipped": 0}
    with open_database(settings) as uow:
        try:
            asyncio.run(_import(settings, uow, args, bar, counts))
        except KeyboardInterrupt:
            bar.close(
                f"interrupted: {counts['imported']} imported, {counts['skipped']} already there; "
                "run the same command again to resume"
            )
            return EXIT_INTERRUPTED
    bar.close(f"done: {counts['imported']} imported, {counts['skipped']} already there")
    return EXIT_OK


async def _import(
    settings: Settings,
    uow: UnitOfWork,
    args: argparse.Namespace,
    bar: ProgressBar,
    counts: dict[str, int],
) -> None:
    async with memory_service(settings, uow) as service:
        with _open_input(args.file) as lines:
            for batch in _batches(lines, max(1, args.batch)):
                outcome = await import_batch(service, args.tenant, batch)
                counts["imported"] += outcome.imported
                counts["skipped"] += outcome.skipped
                bar.advance(len(batch))


def _validate_file(path: str) -> int:
    """Check every line before anything is stored; the number of records."""
    with _open_input(path) as lines:
        return sum(1 for _ in _records(lines))


def _batches(lines: IO[str], size: int) -> Iterator[list[MemoryRecord]]:
    batch: list[MemoryRecord] = []
    for record in _records(lines):
        batch.append(record)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _records(lines: IO[str]) -> Iterator[MemoryRecord]:
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                yield parse_record(line, number, ImportRecord.model_validate)
            except InvalidArgument as exc:
                raise CommandError(exc.message) from exc


def _open_input(path: str) -> IO[str]:
    if path == "-":
        return _Unclosed(sys.stdin)  # type: ignore[return-value]
    try:
        return open(path, encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror}") from exc


class _Unclosed:
    """stdin in a ``with`` block that must not close it."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def __enter__(self) -> IO[str]:
        return self._stream

    def __exit__(self, *exc: object) -> None:
        return None
