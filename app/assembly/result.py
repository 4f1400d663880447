"""What /assemble is asked and what it answers: the request, the typed result, the passthrough."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from app.core.rules.messages import message_tokens
from app.sessions.identity import SessionIdentity


@dataclass(frozen=True, slots=True)
class AssembleInput:
    identity: SessionIdentity
    messages: list[Any]
    phase: str
    token_budget: Any = None
    prompt: str | None = None
    available_tools: list[str] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    runtime_context: dict[str, Any] | None = None
    # How many of the host's oldest messages were left out of ``messages``.
    omitted_messages: int = 0
    # pre_prompt: the host of this session follows it with a tool_loop assemble of the same prompt
    # (it has made one before), whose recall query can be embedded now.
    tool_loop_follows: bool = False


@dataclass(frozen=True, slots=True)
class AssembleResult:
    """The messages to send, their estimate, what to add to the system prompt and to the prompt,
    and the diagnostics (docs/api.md, diagnostics: their keys are the wire's)."""

    messages: list[Any]
    estimated_tokens: int
    diagnostics: dict[str, Any]
    system_prompt_addition: str | None = None
    prepend_context: str | None = None


def passthrough(req: AssembleInput, reason: str, started: float, **extra: Any) -> AssembleResult:
    """The host's messages unchanged (a new list) with their estimate."""
    messages = list(req.messages)
    diagnostics = {"phase": req.phase, "mode": "passthrough", "reason": reason, **extra}
    diagnostics["durationMs"] = elapsed_ms(started)
    return AssembleResult(
        messages=messages, estimated_tokens=estimate(messages), diagnostics=diagnostics
    )


def estimate(messages: list[Any], known: dict[int, int] | None = None) -> int:
    """Estimated tokens, reusing the costs already known for these very message objects."""
    known = known or {}
    return sum(
        known[id(m)] if id(m) in known else message_tokens(m)
        for m in messages
        if isinstance(m, dict)
    )


def elapsed_ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
