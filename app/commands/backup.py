"""``backup``: a consistent copy of the live database, safe while the service runs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.commands.runtime import EXIT_OK, CommandError
from app.db.backup import BackupError, backup_database
from app.settings import Settings


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "backup",
        help="copy the SQLite database consistently, while the service keeps running",
        description="Copy the database of CE_DATABASE_URL to DESTINATION with SQLite's online backup API "
        "(one consistent snapshot; writers are not stopped), check the copy with "
        "PRAGMA integrity_check, then move it into place. Restore: stop the service, put the "
        "copy where CE_DATABASE_URL points (removing any -wal and -shm files there), start it.",
    )
    parser.add_argument("destination", help="the file to write (a new file, unless --force)")
    parser.add_argument("--force", action="store_true", help="replace DESTINATION if it exists")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    settings = Settings()
    destination = Path(args.destination).expanduser()
    if destination.exists() and not args.force:
        raise CommandError(f"{destination} exists; choose a new file or pass --force")
    if not destination.parent.is_dir():
        raise CommandError(f"the folder {destination.parent} does not exist")
    sys.stderr.write(f"backup: copying {settings.database_url} …\n")
    try:
        result = backup_database(
            settings.database_url, destination, settings.db.busy_timeout_ms / 1000
        )
    except BackupError as exc:
        raise CommandError(str(exc)) from exc
    sys.stdout.write(
        f"backup written to {result.destination}: {result.pages} pages, {result.bytes} bytes, "
        f"integrity ok, {result.seconds:.1f}s\n"
    )
    return EXIT_OK
