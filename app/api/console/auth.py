"""Who is using the console: the same API keys as the API, entered once on a sign-in form.

The browser keeps an HttpOnly, SameSite=Strict session cookie under a secret that lives only in
this process: for a CE_API_KEYS entry an HMAC of the key, for a stored key its id and an HMAC of
that id. The key itself never sits in the browser, scripts cannot read the cookie, other sites
cannot send it, and a restart of the service signs everyone out. A stored key is looked up on every
page, so revoking it signs its sessions out at once. Without API keys (the loopback default)
everyone is the local operator of tenant ``default``.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

from fastapi import Request, Response

from app.api.deps import Services
from app.keys.service import (
    READ_SENSITIVE_SCOPE,
    key_identity,
    resolve_key,
    stored_keys_exist,
)
from app.memory.service import Caller

COOKIE = "ce_console"
COOKIE_PATH = "/console"


class LoginRequired(Exception):
    """No valid console session: the browser is sent to the sign-in form."""


class ForeignOrigin(Exception):
    """A state-changing request that another site's page sent."""


@dataclass(frozen=True, slots=True)
class ConsoleUser:
    caller: Caller
    signed_in: bool  # False when no API keys are configured: there is nothing to sign out of


class ConsoleKeys:
    """Checks keys and session tokens against CE_API_KEYS and the stored keys. The methods that may
    read the database are plain functions: call them from the thread pool."""

    STORED = "k"  # session tokens of stored keys start with it; HMACs are hex digits only

    def __init__(self, services: Services) -> None:
        self._tenants = services.settings.api_key_tenants
        self._scopes = services.settings.api_key_scopes
        self._uow = services.uow
        self._secret = secrets.token_bytes(32)

    def required(self) -> bool:
        return bool(self._tenants) or stored_keys_exist(self._uow)

    def token_for(self, key: str) -> str | None:
        """The session token of a valid key, else None (every entry compared in constant time)."""
        found = None
        for candidate in self._tenants:
            if hmac.compare_digest(candidate.encode(), key.encode()):
                found = candidate
        if found is not None:
            return self._token(found)
        stored = resolve_key(self._uow, key).identity if key else None
        if stored is None:
            return None
        return f"{self.STORED}{stored.key_id}.{self._token(f'{self.STORED}{stored.key_id}')}"

    def caller_for(self, token: str) -> Caller | None:
        if token.startswith(self.STORED):
            return self._stored_caller(token)
        for key, tenant in self._tenants.items():
            if hmac.compare_digest(self._token(key), token):
                sensitive = READ_SENSITIVE_SCOPE in self._scopes.get(key, frozenset())
                return Caller(tenant_id=tenant, can_read_sensitive=sensitive)
        return None

    def _stored_caller(self, token: str) -> Caller | None:
        """The caller of a stored key's session token while the key is unrevoked."""
        subject, _, mac = token.partition(".")
        if not subject[1:].isdigit() or not hmac.compare_digest(self._token(subject), mac):
            return None
        identity = key_identity(self._uow, int(subject[1:]))
        if identity is None:
            return None
        sensitive = READ_SENSITIVE_SCOPE in identity.scopes
        return Caller(tenant_id=identity.tenant_id, can_read_sensitive=sensitive)

    def _token(self, key: str) -> str:
        return hmac.new(self._secret, key.encode(), hashlib.sha256).hexdigest()


def console_keys(request: Request) -> ConsoleKeys:
    keys = getattr(request.app.state, "console_keys", None)
    if keys is None:
        services: Services = request.app.state.services
        keys = request.app.state.console_keys = ConsoleKeys(services)
    assert isinstance(keys, ConsoleKeys)
    return keys


def console_user(request: Request) -> ConsoleUser:
    """The signed-in operator (a dependency of every console page, run in the thread pool: it
    may read the stored keys); raises LoginRequired."""
    keys = console_keys(request)
    caller = keys.caller_for(request.cookies.get(COOKIE, ""))
    if caller is not None:
        return ConsoleUser(caller, signed_in=True)
    if keys.required():
        raise LoginRequired()
    return ConsoleUser(Caller(tenant_id="default", can_read_sensitive=True), signed_in=False)


def same_origin(request: Request) -> None:
    """Refuse a form post whose Origin is another site (SameSite=Strict already keeps the cookie
    off such requests; this also covers the keyless loopback default, which has no cookie)."""
    origin = request.headers.get("origin")
    if origin is not None and urlsplit(origin).netloc != request.headers.get("host", ""):
        raise ForeignOrigin()


def set_session_cookie(response: Response, token: str, secure: bool) -> None:
    response.set_cookie(
        COOKIE, token, path=COOKIE_PATH, httponly=True, samesite="strict", secure=secure
    )


def clear_session_cookie(response: object) -> None:
    response.delete_cookie(COOKIE, path=COOKIE_PATH, httponly=True, samesite="strict")  # type: ignore[attr-defined]
