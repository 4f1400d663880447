"""Console page of Phase 2 jobs: pending, running, failed with the reason, retry and cancel."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from app.api.console.auth import ConsoleUser, console_user, same_origin
from app.api.console.rendering import ConsoleRoute, page, redirect
from app.api.deps import ServicesDep
from app.api.schemas.jobs import job_record
from app.jobs.admin import cancel_job, job_counts, list_jobs, retry_job

router = APIRouter(prefix="/console", route_class=ConsoleRoute)
UserDep = Annotated[ConsoleUser, Depends(console_user)]
JobId = Annotated[int, Path(ge=1, le=2**62)]
# Order of the sections on the page: what needs a person first.
SECTIONS = (
    ("failed", "Failed"),
    ("queued", "Pending"),
    ("running", "Running"),
    ("cancelled", "Cancelled"),
    ("succeeded", "Recently succeeded"),
)
PER_SECTION = 100


@router.get("/jobs")
async def jobs_page(
    request: Request,
    services: ServicesDep,
    user: UserDep,
    retried: Annotated[int | None, Query(ge=1)] = None,
    cancelled: Annotated[int | None, Query(ge=1)] = None,
) -> Response:
    tenant = user.caller.tenant_id
    counts = await run_in_threadpool(job_counts, services.uow, tenant)
    sections = []
    for status, title in SECTIONS:
        found = await run_in_threadpool(list_jobs, services.uow, tenant, [status], PER_SECTION)
        jobs = [job_record(job) for job in found]
        sections.append(
            {"status": status, "title": title, "jobs": jobs, "total": counts.get(status, 0)}
        )
    context = {
        "user": user,
        "section": "jobs",
        "sections": sections,
        "counts": counts,
        "retried": retried,
        "cancelled": cancelled,
    }
    return page(request, "jobs.html", context)


@router.post("/jobs/{job_id}/retry", dependencies=[Depends(same_origin)])
async def retry(request: Request, job_id: JobId, services: ServicesDep, user: UserDep) -> Response:
    await run_in_threadpool(retry_job, services.uow, user.caller.tenant_id, job_id)
    services.notify_worker()
    return redirect(request, f"/console/jobs?retried={job_id}")


@router.post("/jobs/{job_id}/cancel", dependencies=[Depends(same_origin)])
async def cancel(request: Request, job_id: JobId, services: ServicesDep, user: UserDep) -> Response:
    await run_in_threadpool(cancel_job, services.uow, user.caller.tenant_id, job_id)
    return redirect(request, f"/console/jobs?cancelled={job_id}")
