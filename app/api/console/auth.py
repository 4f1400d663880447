"""Who is using the console: the same API keys as the API, entered once on a sign-in form.

The browser keeps an HttpOnly, SameSite=Strict session cookie holding an HMAC of the key under a
secret that lives only in this process: the key itself never sits in the browser, scripts cannot
read the cookie, other sites cannot send it, and a restart of the service signs everyone out.
Without API keys (the loopback default) everyone is the local operator of tenant ``default``.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

from fastapi import Request, Response

from app.api.deps import READ_SENSITIVE_SCOPE, get_services
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
    """Checks keys and session tokens against the configured API keys."""

    def __init__(self, tenants: dict[str, str], scopes: dict[str, frozenset[str]]) -> None:
        self._tenants = tenants
        self._scopes = scopes
        self._secret = secrets.token_bytes(32)

    @property
    def required(self) -> bool:
        return bool(self._tenants)

    def token_for(self, key: str) -> str | None:
        """The session token of a valid key, else None (every key compared in constant time)."""
        found = None
        for candidate in self._tenants:
            if hmac.compare_digest(candidate.encode(), key.encode()):
                found = candidate
        return self._token(found) if found is not None else None

    def caller_for(self, token: str) -> Caller | None:
        for key, tenant in self._tenants.items():
            if hmac.compare_digest(self._token(key), token):
                sensitive = READ_SENSITIVE_SCOPE in self._scopes.get(key, frozenset())
                return Caller(tenant_id=tenant, can_read_sensitive=sensitive)
        return None

    def _token(self, key: str) -> str:
        return hmac.new(self._secret, key.encode(), hashlib.sha256).hexdigest()


def console_keys(request: Request) -> ConsoleKeys:
    keys = getattr(request.app.state, "console_keys", None)
    if keys is None:
        settings = get_services(request).settings
        keys = request.app.state.console_keys = ConsoleKeys(
            settings.api_key_tenants, settings.api_key_scopes
        )
    assert isinstance(keys, ConsoleKeys)
    return keys


def console_user(request: Request) -> ConsoleUser:
    """The signed-in operator (a dependency of every console page); raises LoginRequired."""
    keys = console_keys(request)
    if not keys.required:
        return ConsoleUser(Caller(tenant_id="default", can_read_sensitive=True), signed_in=False)
    caller = keys.caller_for(request.cookies.get(COOKIE, ""))
    if caller is None:
        raise LoginRequired()
    return ConsoleUser(caller, signed_in=True)


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
