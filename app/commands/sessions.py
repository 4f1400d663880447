"""``sessions list|show|export``: what the agents' sessions hold."""

from __future__ import annotations

import argparse
import json
import sys

from app.api.schemas.sessions import export_record, session_row_record, timeline_record
from app.commands.runtime import EXIT_OK, open_database, print_listing, print_table
from app.sessions.admin import export_session, list_sessions, session_timeline
from app.settings import Settings

LIST_COLUMNS = [
    ("tenantId", "TENANT"),
    ("sessionId", "SESSION"),
    ("agentId", "AGENT"),
    ("userId", "USER"),
    ("messageCount", "LIVE"),
    ("totalMessageCount", "TOTAL"),
    ("archiveCount", "ARCHIVES"),
    ("updatedAt", "LAST ACTIVITY"),
]
ARCHIVE_COLUMNS = [
    ("archiveId", "ARCHIVE"),
    ("status", "STATUS"),
    ("messageCount", "MESSAGES"),
    ("workingMemoryPath", "BUILT BY"),
    ("completedAt", "FINISHED"),
    ("error", "ERROR"),
]


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("sessions", help="list, show or export agent sessions")
    actions = parser.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="sessions, most recently active first")
    listing.add_argument("--tenant", help="only this tenant's sessions (default: every tenant)")
    listing.add_argument(
        "--search", help="only sessions whose id, key, agent or user contains this text"
    )
    listing.add_argument("--limit", type=int, default=100, help="at most this many (default 100)")
    listing.add_argument(
        "--json", action="store_true", help="one JSON object per line instead of a table"
    )
    listing.set_defaults(run=run_list)
    show = actions.add_parser(
        "show", help="a session's counters, archives and newest live messages"
    )
    show.add_argument("session_id")
    show.add_argument("--tenant", default="default", help="the session's tenant (default: default)")
    show.add_argument("--json", action="store_true", help="the whole timeline as one JSON document")
    show.set_defaults(run=run_show)
    export = actions.add_parser(
        "export", help="a session as JSON Lines: the session, its archives, every message"
    )
    export.add_argument("session_id")
    export.add_argument(
        "--tenant", default="default", help="the session's tenant (default: default)"
    )
    export.add_argument("--output", "-o", help="write to this file instead of stdout")
    export.set_defaults(run=run_export)


def run_list(args: argparse.Namespace) -> int:
    with open_database(Settings()) as uow:
        found = list_sessions(uow, args.tenant, args.search, max(1, args.limit))
    rows = [session_row_record(row) for row in found]
    print_listing(rows, LIST_COLUMNS, as_json=args.json, empty="no sessions")
    return EXIT_OK


def run_show(args: argparse.Namespace) -> int:
    with open_database(Settings()) as uow:
        timeline = timeline_record(
            session_timeline(uow, args.tenant, args.session_id, live_limit=10)
        )
    if args.json:
        sys.stdout.write(json.dumps(timeline, ensure_ascii=False, indent=2) + "\n")
        return EXIT_OK
    for key in (
        "sessionId",
        "sessionKey",
        "agentId",
        "userId",
        "messageCount",
        "totalMessageCount",
        "pendingTokens",
        "commitCount",
        "createdAt",
        "updatedAt",
    ):
        sys.stdout.write(f"{key}: {timeline[key]}\n")
    sys.stdout.write("\n")
    if timeline["archives"]:
        print_table(timeline["archives"], ARCHIVE_COLUMNS)
    else:
        sys.stdout.write("no archives\n")
    return EXIT_OK


def run_export(args: argparse.Namespace) -> int:
    with open_database(Settings()) as uow:
        out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout  # noqa: SIM115
        try:
            count = 0
            for found in export_session(uow, args.tenant, args.session_id):
                record = export_record(found)
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
                count += record["type"] == "message"
        finally:
            if out is not sys.stdout:
                out.close()
    sys.stderr.write(f"exported session {args.session_id}: {count} messages\n")
    return EXIT_OK
