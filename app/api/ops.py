"""GET /healthz, /readyz, /metrics."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from app import __version__
from app.api.deps import IdentityDep, ServicesDep
from app.api.exception_handlers import error_response
from app.api.json_body import JsonRoute
from app.keys.service import METRICS_ALL_SCOPE
from app.ops import queue_depth, readiness_problem

router = APIRouter(tags=["operations"], route_class=JsonRoute)


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
async def metrics(services: ServicesDep, identity: IdentityDep) -> Response:
    """Prometheus text exposition (behind the API key when keys are set). Per-tenant series of the
    key's own tenant only, unless the key has the ``metrics:all-tenants`` scope."""
    services.metrics.queue_depth.set(await run_in_threadpool(queue_depth, services.uow))
    every_tenant = identity.scopes is None or METRICS_ALL_SCOPE in identity.scopes
    body = services.metrics.render(None if every_tenant else identity.tenant_id)
    return Response(body, media_type="text/plain; version=0.0.4; charset=utf-8")
