"""The operator's records of Phase 2 jobs (console page, `jobs` command JSON): camelCase like the API."""

from __future__ import annotations

from typing import Any

from app.core.clock import isoformat
from app.jobs.admin import JobView


def job_record(job: JobView) -> dict[str, Any]:
    return {
        "jobId": job.job_id,
        "tenantId": job.tenant_id,
        "sessionId": job.session_id,
        "archiveId": job.archive_id,
        "status": job.status,
        "attempts": job.attempts,
        "workerId": job.worker_id,
        "leaseExpiresAt": isoformat(job.lease_expires_at),
        "runAfter": isoformat(job.run_after),
        "error": job.error,
        "stage": job.stage,
        "createdAt": isoformat(job.created_at),
        "updatedAt": isoformat(job.updated_at),
    }
