"""Session identity helpers: bypass patterns, agent id and cron detection.

Bypass patterns are globs over ``sessionKey``, else ``sessionId`` (docs/lifecycle.md, Capture step 1;
docs/peers.md, OpenViking §5.1): ``*`` matches ``[^:]*`` (one key segment), ``**`` matches ``.*``, everything
else is literal, and the pattern is anchored at both ends.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

DEFAULT_AGENT_ID = "main"

_AGENT_KEY_RE = re.compile(r"\Aagent:([^:]+):")


def compile_session_pattern(glob: str) -> re.Pattern[str]:
    """Compile a bypass glob into an anchored regular expression."""
    parts: list[str] = []
    i = 0
    while i < len(glob):
        if glob.startswith("**", i):
            parts.append(".*")
            i += 2
        elif glob[i] == "*":
            parts.append("[^:]*")
            i += 1
        else:
            parts.append(re.escape(glob[i]))
            i += 1
    # \A and \Z rather than ^ and $: "$" would also match before a trailing newline.
    return re.compile(r"\A" + "".join(parts) + r"\Z", re.DOTALL)


def is_bypassed(
    patterns: Iterable[str | re.Pattern[str]],
    session_key: str | None,
    session_id: str | None,
) -> bool:
    """Whether the session matches a bypass pattern (sessionKey when present, else sessionId)."""
    target = session_key if session_key else session_id
    if not target:
        return False
    for pattern in patterns:
        compiled = pattern if isinstance(pattern, re.Pattern) else compile_session_pattern(pattern)
        if compiled.match(target):
            return True
    return False


def _non_empty_str(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def resolve_agent_id(
    agent_id: str | None,
    session_key: str | None,
    runtime_context: Mapping[str, Any] | None,
) -> str:
    """Agent id: body ``agentId``, else ``agent:<id>:`` of the key, else runtime context, else main.

    Order from docs/api.md, Conventions, Identity.
    """
    explicit = _non_empty_str(agent_id)
    if explicit:
        return explicit
    if isinstance(session_key, str):
        match = _AGENT_KEY_RE.match(session_key)
        if match and match.group(1).strip():
            return match.group(1).strip()
    if isinstance(runtime_context, Mapping):
        from_context = _non_empty_str(runtime_context.get("agentId"))
        if from_context:
            return from_context
    return DEFAULT_AGENT_ID


def is_cron_session(session_key: str | None, runtime_context: Mapping[str, Any] | None) -> bool:
    """Whether a run is a cron run: by its key or the shim's runtime context (docs/peers.md, OpenClaw §1.7)."""
    if isinstance(session_key, str) and (
        ":cron:" in session_key or session_key.startswith("cron:")
    ):
        return True
    if isinstance(runtime_context, Mapping):
        if runtime_context.get("isCron") is True:
            return True
        if runtime_context.get("automationKind") == "cron":
            return True
    return False
