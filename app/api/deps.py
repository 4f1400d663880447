"""Request dependencies: the wired services and the caller's identity."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, Header, Request

from app.core.bypass import resolve_agent_id
from app.core.recall import RecallSource
from app.core.token_bucket import TokenBuckets
from app.db.uow import UnitOfWork
from app.errors import Unauthenticated
from app.jobs.worker import Phase2Worker
from app.memory.service import Caller, MemoryService
from app.metrics import Metrics
from app.sessions.identity import SessionIdentity
from app.settings import Settings


@dataclass
class Services:
    """Everything the lifespan builds; one instance per app."""

    settings: Settings
    uow: UnitOfWork
    metrics: Metrics
    recall: RecallSource
    worker: Phase2Worker | None
    memory: MemoryService
    rate_limits: TokenBuckets = field(default_factory=TokenBuckets)

    def notify_worker(self) -> None:
        if self.worker is not None:
            self.worker.notify()


def get_services(request: Request) -> Services:
    return request.app.state.services  # type: ignore[no-any-return]


ServicesDep = Annotated[Services, Depends(get_services)]


def get_tenant(services: ServicesDep, authorization: Annotated[str | None, Header()] = None) -> str:
    """The tenant of the API key; ``default`` while no keys are configured (docs/api.md, Identity)."""
    keys = services.settings.api_key_tenants
    if not keys:
        return "default"
    scheme, _, token = (authorization or "").partition(" ")
    tenant = keys.get(token.strip()) if scheme.lower() == "bearer" else None
    if tenant is None:
        raise Unauthenticated("a valid API key is required (Authorization: Bearer <key>)")
    return tenant


TenantDep = Annotated[str, Depends(get_tenant)]

READ_SENSITIVE_SCOPE = "memories:read-sensitive"


def get_caller(
    services: ServicesDep,
    tenant: TenantDep,
    authorization: Annotated[str | None, Header()] = None,
    user_id: Annotated[str | None, Header(alias="X-User-Id", max_length=256)] = None,
) -> Caller:
    """Tenant, user and scopes of the request; without API keys the local caller has every scope."""
    scopes = services.settings.api_key_scopes
    if not scopes:
        can_read_sensitive = True
    else:
        token = (authorization or "").partition(" ")[2].strip()
        can_read_sensitive = READ_SENSITIVE_SCOPE in scopes.get(token, frozenset())
    return Caller(
        tenant_id=tenant,
        user_id=user_id or "default",
        agent_id="main",
        can_read_sensitive=can_read_sensitive,
        user_from_header=user_id is not None,
    )


CallerDep = Annotated[Caller, Depends(get_caller)]
UserIdHeader = Annotated[str | None, Header(alias="X-User-Id", max_length=256)]


def hook_identity(tenant: str, body: Any, user_header: str | None) -> SessionIdentity:
    """Who a hook body is about: session, agent (docs/api.md rules) and user."""
    return SessionIdentity(
        tenant_id=tenant,
        session_id=body.session_id,
        session_key=body.session_key or _runtime_str(body.runtime_context, "sessionKey"),
        agent_id=resolve_agent_id(body.agent_id, body.session_key, body.runtime_context),
        user_id=user_header or body.user_id or "default",
    )


def _runtime_str(runtime_context: dict[str, Any] | None, key: str) -> str | None:
    value = (runtime_context or {}).get(key)
    return value if isinstance(value, str) and value else None
