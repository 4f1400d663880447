"""Per-tenant rate limits (docs/quality.md, Bounded resources): an in-process token bucket per tenant and
class of request (hooks, search); past the burst the answer is 429 ``RATE_LIMITED`` with
``Retry-After``.

In process on purpose, also when several replicas serve one database: each enforces its share
(``CE_RATE_LIMIT__REPLICAS``) of the tenant's limit, so behind a gateway that spreads requests
evenly the tenant gets about the configured rate in all. A bucket shared through the database
would add a write to every hook on the one resource all replicas contend for; the limit guards
against a runaway client, it is not a quota to the request (README, Running at scale).
"""

from __future__ import annotations

from fastapi import Depends, Request

from app.api.deps import IdentityDep, services_of
from app.api.schemas.base import ErrorEnvelope
from app.errors import RateLimited

RATE_LIMITED: dict[int | str, dict[str, object]] = {
    429: {
        "model": ErrorEnvelope,
        "description": "Per-tenant rate limit exceeded (RATE_LIMITED); Retry-After",
    },
}


def rate_limit(kind: str):  # type: ignore[no-untyped-def]
    """A dependency that spends one token of the caller's tenant for ``kind`` (hooks or search)."""

    # Async: it runs on the event loop, so the buckets are never touched by two threads at once.
    # The services and tenant are read here, not taken as dependencies: each dependency costs
    # every request FastAPI's work of solving it, several times what this function costs.
    async def limit(request: Request, identity: IdentityDep) -> None:
        request.state.kind = kind  # the request class of the per-tenant metrics
        services = services_of(request)
        tenant = identity.tenant_id
        settings = services.settings.rate_limit
        rate, burst = settings.share(kind)
        if rate <= 0:
            return
        wait = services.rate_limits.take((tenant, kind), rate, burst)
        if wait > 0:
            services.metrics.tenant_rate_limited.labels(tenant, kind).inc()
            raise RateLimited(
                f"too many {kind} requests for this tenant; retry in {wait:.1f} s",
                wait,
                {"limit": kind, **settings.described(kind)},
            )

    return limit


SEARCH_LIMIT = [Depends(rate_limit("search"))]
