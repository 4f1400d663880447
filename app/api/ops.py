"""GET /healthz, /readyz, /metrics."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from app import __version__
from app.api.deps import ServicesDep, TenantDep
from app.api.exception_handlers import error_response
from app.ops import queue_depth, readiness_problem

router = APIRouter(tags=["operations"])


@router.get("/healthz", operation_id="healthz")
async def healthz() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok", "version": __version__}


@router.get("/readyz", operation_id="readyz", responses={503: {"description": "Not ready"}})
async def readyz(services: ServicesDep) -> JSONResponse:
    """Ready when the database answers and its migrations are current."""
    retry_after = services.settings.db.storage_retry_after_s
    problem = await run_in_threadpool(readiness_problem, services.uow, retry_after)
    if problem is not None:
        return error_response(
            503, "UNAVAILABLE", problem, {"reason": problem}, {"Retry-After": str(retry_after)}
        )
    return JSONResponse({"status": "ready"})


@router.get(
    "/metrics",
    operation_id="metrics",
    response_class=Response,
    responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}},
)
async def metrics(services: ServicesDep, _tenant: TenantDep) -> Response:
    """Prometheus text exposition (behind the API key when keys are set)."""
    services.metrics.queue_depth.set(await run_in_threadpool(queue_depth, services.uow))
    return Response(
        services.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8"
    )
