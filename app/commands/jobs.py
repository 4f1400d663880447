"""``jobs list|retry|cancel``: the Phase 2 queue, across tenants unless one is named."""

from __future__ import annotations

import argparse
import sys

from app.api.schemas.jobs import job_record
from app.commands.runtime import EXIT_OK, open_database, print_listing
from app.db.models import JobStatus
from app.jobs.admin import cancel_job, list_jobs, retry_job
from app.settings import Settings

COLUMNS = [
    ("jobId", "JOB"),
    ("tenantId", "TENANT"),
    ("sessionId", "SESSION"),
    ("archiveId", "ARCHIVE"),
    ("status", "STATUS"),
    ("attempts", "ATTEMPTS"),
    ("updatedAt", "CHANGED"),
    ("error", "ERROR"),
]


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "jobs",
        help="list, retry or cancel Phase 2 jobs",
        description="The durable Phase 2 queue: one job per archive.",
    )
    actions = parser.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="list jobs, newest change first")
    listing.add_argument(
        "--status",
        action="append",
        choices=[s.value for s in JobStatus],
        help="only jobs in this status (repeatable)",
    )
    listing.add_argument("--tenant", help="only this tenant's jobs (default: every tenant)")
    listing.add_argument(
        "--limit", type=int, default=100, help="at most this many jobs (default 100)"
    )
    listing.add_argument(
        "--json", action="store_true", help="one JSON object per line instead of a table"
    )
    listing.set_defaults(run=run_list)
    for name, verb, handler in (
        ("retry", "queue a failed or cancelled job again, with all its attempts", run_retry),
        ("cancel", "cancel a queued or running job (its archive is marked failed)", run_cancel),
    ):
        action = actions.add_parser(name, help=verb, description=verb[0].upper() + verb[1:] + ".")
        action.add_argument("job_id", type=int, help="the job's number (JOB in `jobs list`)")
        action.add_argument("--tenant", help="refuse a job of another tenant")
        action.set_defaults(run=handler)


def run_list(args: argparse.Namespace) -> int:
    with open_database(Settings()) as uow:
        found = list_jobs(uow, args.tenant, args.status, max(1, args.limit))
    jobs = [job_record(job) for job in found]
    print_listing(jobs, COLUMNS, as_json=args.json, empty="no jobs", clip={"error": 80})
    return EXIT_OK


def run_retry(args: argparse.Namespace) -> int:
    with open_database(Settings()) as uow:
        retry_job(uow, args.tenant, args.job_id)
    sys.stdout.write(f"job {args.job_id} queued again\n")
    return EXIT_OK


def run_cancel(args: argparse.Namespace) -> int:
    with open_database(Settings()) as uow:
        cancel_job(uow, args.tenant, args.job_id)
    sys.stdout.write(f"job {args.job_id} cancelled\n")
    return EXIT_OK
