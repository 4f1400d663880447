"""Each OpenClaw hook call noted per session, with the host and plugin versions the plugin sent.

The plugin sends ``X-Host-Version`` (``openclaw/<version>``) and ``X-Plugin-Version`` with every
request. A value that is not a plain version string is recorded as not sent: a hook is never
refused for its bookkeeping, and a failure to record one is logged, not raised.
"""

from __future__ import annotations

import re
import time

import structlog
from fastapi import Request

from app.api.deps import Services
from app.sessions.hooks import HookCall
from app.sessions.identity import SessionIdentity

log = structlog.get_logger("app.api.hooks")

HOST_VERSION_HEADER = "x-host-version"
PLUGIN_VERSION_HEADER = "x-plugin-version"
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+/-]{0,63}")


def header_version(value: str | None) -> str | None:
    """The header's value when it is a plain version string (letters, digits, ``._+/-``)."""
    value = (value or "").strip()
    return value if _VERSION.fullmatch(value) else None


async def note_hook_call(
    http: Request, services: Services, identity: SessionIdentity, hook: str
) -> None:
    """Record the call; count it in /metrics; warn once for each flag it raised."""
    call = HookCall(
        identity=identity,
        hook=hook,
        host_version=header_version(http.headers.get(HOST_VERSION_HEADER)),
        plugin_version=header_version(http.headers.get(PLUGIN_VERSION_HEADER)),
    )
    try:
        recorded = await services.hook_notes.note(call)
    except Exception as error:  # noqa: BLE001 - the hook itself must still be served
        log.warning("hook_call_not_recorded", hook=hook, error=str(error))
        return
    host, plugin = call.host_version or "unknown", call.plugin_version or "unknown"
    services.metrics.observe_hook(
        identity.tenant_id, host, plugin, hook, time.time(), recorded.raised
    )
    for flag in recorded.raised:
        log.warning(
            "session_hooks_flagged",
            flag=flag,
            session_id=identity.session_id,
            tenant=identity.tenant_id,
            hook=hook,
            host_version=host,
            plugin_version=plugin,
            calls={r.hook: r.calls for r in recorded.health.records},
        )
