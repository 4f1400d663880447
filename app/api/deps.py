"""Request dependencies: the wired services and the caller's identity."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, Header, Request
from starlette.concurrency import run_in_threadpool

from app.assembly.service import StoredHistoryCache
from app.core.recall import RecallSource
from app.core.rules.bypass import resolve_agent_id
from app.core.token_bucket import TokenBuckets
from app.db.uow import UnitOfWork
from app.errors import Unauthenticated
from app.jobs.worker import Phase2Worker
from app.keys.service import READ_SENSITIVE_SCOPE, resolve_key
from app.memory.service import Caller, MemoryService
from app.metrics import Metrics
from app.sessions.hook_notes import HookNotes
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
    history_cache: StoredHistoryCache | None = None
    hook_notes: HookNotes = field(init=False)

    def __post_init__(self) -> None:
        self.hook_notes = HookNotes(self.uow)

    def notify_worker(self) -> None:
        if self.worker is not None:
            self.worker.notify()


# The dependencies are async although they never wait: FastAPI runs a plain function dependency
# in the thread pool, a hop there and back per dependency per request.


def services_of(request: Request) -> Services:
    return request.app.state.services  # type: ignore[no-any-return]


async def get_services(request: Request) -> Services:
    return services_of(request)


ServicesDep = Annotated[Services, Depends(get_services)]


@dataclass(frozen=True, slots=True)
class Identity:
    """Whom a request speaks for: a key's tenant and scopes; ``scopes`` None for the keyless local
    caller, who has every scope."""

    tenant_id: str
    scopes: frozenset[str] | None


LOCAL_CALLER = Identity("default", None)
KEY_REQUIRED = "a valid API key is required (Authorization: Bearer <key>)"


async def get_identity(
    request: Request, authorization: Annotated[str | None, Header()] = None
) -> Identity:
    """The caller's key: a CE_API_KEYS entry (answered here, on the event loop), else an unrevoked
    stored key, looked up on every request (on the event loop with SQLite, in the thread pool
    with a database server), so a revoke holds at once on every replica. Keys are required while
    CE_API_KEYS is set or any stored key is unrevoked; else the caller is the local ``default``
    (docs/api.md, Identity)."""
    # The services are read here, not taken as a dependency: FastAPI's cost per dependency of
    # a request is several times that of this function, and every authenticated request pays it.
    services = services_of(request)
    settings = services.settings
    scheme, _, token = (authorization or "").partition(" ")
    token = token.strip() if scheme.lower() == "bearer" else ""
    tenant = settings.api_key_tenants.get(token) if token else None
    if tenant is not None:
        identity = Identity(tenant, settings.api_key_scopes.get(token, frozenset()))
    elif not token and settings.api_keys:
        raise Unauthenticated(KEY_REQUIRED)  # no need to ask the database
    elif services.uow.storage.in_process_reads:
        # SQLite answers an indexed read of one row from pages in memory in less time than the hop
        # to a worker thread and back costs (bench/RESULTS.md, Measurements behind the code). A server's reads wait on the network.
        identity = _stored_identity(services, token)
    else:
        identity = await run_in_threadpool(_stored_identity, services, token)
    request.state.tenant = identity.tenant_id  # the per-tenant metrics of the middleware
    return identity


def _stored_identity(services: Services, token: str) -> Identity:
    found = resolve_key(services.uow, token)
    if found.identity is not None:
        return Identity(found.identity.tenant_id, found.identity.scopes)
    if services.settings.api_keys or found.keys_exist:
        raise Unauthenticated(KEY_REQUIRED)
    return LOCAL_CALLER


IdentityDep = Annotated[Identity, Depends(get_identity)]


async def get_tenant(identity: IdentityDep) -> str:
    """The tenant of the API key; ``default`` while no keys are configured (docs/api.md, Identity)."""
    return identity.tenant_id


TenantDep = Annotated[str, Depends(get_tenant)]


async def get_caller(
    identity: IdentityDep,
    user_id: Annotated[str | None, Header(alias="X-User-Id", max_length=256)] = None,
) -> Caller:
    """Tenant, user and scopes of the request; without API keys the local caller has every scope."""
    return Caller(
        tenant_id=identity.tenant_id,
        user_id=user_id or "default",
        agent_id="main",
        can_read_sensitive=identity.scopes is None or READ_SENSITIVE_SCOPE in identity.scopes,
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
