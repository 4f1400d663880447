"""``copy``: copy a SQLite database into PostgreSQL (resumable), then verify the copy."""

from __future__ import annotations

import argparse
import sys

from app.commands.progress import ProgressBar
from app.commands.runtime import EXIT_INTERRUPTED, EXIT_OK, CommandError, print_table
from app.dbcopy.endpoints import CopyError, backend_of, open_endpoints, shown
from app.dbcopy.run import DEFAULT_BATCH, copy_database
from app.dbcopy.verify import TableCheck, verify_copy
from app.settings import Settings

COLUMNS = [
    ("table", "TABLE"),
    ("source", "SOURCE ROWS"),
    ("target", "TARGET ROWS"),
    ("sourceSum", "SOURCE CHECKSUM"),
    ("targetSum", "TARGET CHECKSUM"),
    ("result", "RESULT"),
]


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "copy",
        help="copy a SQLite database into PostgreSQL and verify the copy",
        description="Migrate the target to the code's schema, copy every table of durable data "
        "(sessions, messages, archives, jobs, memories with their vectors, audit, ...) in batches "
        "keeping the ids, rebuild the text indexes the PostgreSQL way, then compare row counts "
        "and checksums of every table. Interrupted, the same command continues where it stopped. "
        "Stop the service first: rows written during the copy are not copied.",
    )
    parser.add_argument(
        "--to",
        required=True,
        metavar="URL",
        help="the PostgreSQL database (postgresql+psycopg://…)",
    )
    parser.add_argument(
        "--from",
        dest="source",
        metavar="URL",
        help="the SQLite database (sqlite:///path; default: CE_DATABASE_URL)",
    )
    parser.add_argument(
        "--batch", type=int, default=DEFAULT_BATCH, help="rows per committed batch (default 1000)"
    )
    parser.add_argument(
        "--verify-only", action="store_true", help="compare source and target, copy nothing"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    settings = Settings()
    source = args.source or settings.database_url
    if args.source is None and backend_of(source) != "sqlite":
        raise CommandError("CE_DATABASE_URL is not a SQLite database: name the source with --from")
    if args.batch < 1:
        raise CommandError("--batch must be at least 1")
    try:
        with open_endpoints(settings, source, args.to, migrate=not args.verify_only) as ends:
            if not args.verify_only:
                sys.stderr.write(f"copy: {shown(source)} → {shown(args.to)}\n")
                try:
                    copy_database(ends, _progress, args.batch)
                except KeyboardInterrupt:
                    sys.stderr.write("copy interrupted: run the same command again to resume\n")
                    return EXIT_INTERRUPTED
            checks = verify_copy(ends)
    except CopyError as exc:
        raise CommandError(str(exc)) from exc
    print_table([_record(c) for c in checks], COLUMNS)
    failed = [c.table for c in checks if not c.ok]
    if failed:
        raise CommandError(f"the copy differs from its source in: {', '.join(failed)}")
    return EXIT_OK


def _progress(table: str, total: int) -> ProgressBar:
    return ProgressBar(f"copy {table}", total)


def _record(check: TableCheck) -> dict[str, object]:
    return {
        "table": check.table,
        "source": check.source_rows,
        "target": check.target_rows,
        "sourceSum": check.source_sum or "(count)",
        "targetSum": check.target_sum or "(count)",
        "result": "ok" if check.ok else "MISMATCH",
    }
