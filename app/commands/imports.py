"""``import openclaw|claude-code|codex <path>``: an agent host's transcripts into the service.

Reads the host's own store (read-only; an OpenClaw host may keep running), then stores session
by session in batches with a progress bar (docs/api.md, Import). Interrupted or killed, the same
command run again stores only what is missing. A line that cannot be read is reported with its
file and line number and skipped. The summary is one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from app.commands.progress import ProgressBar
from app.commands.runtime import EXIT_INTERRUPTED, EXIT_OK, CommandError, open_database
from app.imports.service import (
    DEFAULT_BATCH,
    ImportOptions,
    ImportSummary,
    import_sessions,
    total_messages,
)
from app.imports.sources import SOURCES, Source, read_path
from app.settings import Settings

WHERE = {
    "openclaw": "the state folder (~/.openclaw), an agent database "
    "(agents/<id>/agent/openclaw-agent.sqlite) or a session .jsonl file of an older host",
    "claude-code": "~/.claude/projects, one project's folder or one session .jsonl file",
    "codex": "~/.codex/sessions, a day's folder or one rollout .jsonl file",
}


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("import", help="import an agent host's transcripts (backfill)")
    sources = parser.add_subparsers(dest="source", required=True)
    for source in SOURCES:
        command = sources.add_parser(
            source,
            help=f"{source} transcripts",
            description=f"Store the sessions of {source} transcripts as the hooks would have "
            "stored them, then archive what is older than the live window. Running it again "
            "stores nothing new; after an interruption it resumes.",
        )
        command.add_argument("path", help=WHERE[source])
        command.add_argument("--tenant", default="default", help="into whose sessions")
        command.add_argument(
            "--batch",
            type=int,
            default=DEFAULT_BATCH,
            help=f"messages per transaction (default {DEFAULT_BATCH})",
        )
        command.set_defaults(run=run_import)


def run_import(args: argparse.Namespace) -> int:
    settings = Settings()
    path = Path(args.path).expanduser()
    if not path.exists():
        raise CommandError(f"{path} does not exist")
    source: Source = args.source
    read = read_path(source, path)
    for problem in read.problems + [p for s in read.sessions for p in s.problems]:
        sys.stderr.write(f"skipped {problem.describe()}\n")
    bar = ProgressBar("import", total_messages(read))
    options = ImportOptions(args.tenant, max(1, args.batch))
    with open_database(settings) as uow:
        try:
            summary = import_sessions(uow, settings, read, options, bar.advance)
        except KeyboardInterrupt:
            bar.close("interrupted: run the same command again to resume")
            return EXIT_INTERRUPTED
    bar.close(_note(summary))
    sys.stdout.write(json.dumps(summary.as_json(), ensure_ascii=False) + "\n")
    return EXIT_OK


def _note(summary: ImportSummary) -> str:
    skipped = sum(summary.skipped.values())
    return (
        f"done: {summary.sessions} sessions, {summary.messages} messages stored, "
        f"{summary.duplicates} already there, {skipped} lines skipped, "
        f"{len(summary.problems)} unreadable, {summary.archives} archives for Phase 2"
    )
