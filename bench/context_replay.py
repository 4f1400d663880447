"""The host's side of ``bench/context.py``: a conversation replayed through ``/commit-turn`` and a
question asked through both assembles, as the OpenClaw 2026.9 host and this repository's plugin
(``clients/openclaw/src/engine.ts``) send them, over the service's HTTP API.

- The first speaker is the user, the second the assistant; messages are paired into host turns
  (``host_turns``) and each turn is one ``/commit-turn``: that turn's messages, each with its turn's
  time, ``runtimeContext.tokenBudget`` = the budget, one sessionKey per conversation, one
  advancementKey per turn. The service's own auto-commit archives as it goes.
- A question is the prompt of a new turn: a pre_prompt ``/assemble`` with the newest 64 messages of
  the transcript and ``omittedMessageCount`` = the rest (sent again whole if the service answers
  ``host_history_needed``, as the plugin does), then a tool_loop ``/assemble`` on what it returned
  (its newest 64 messages too; the plugin puts the ones it left out back before the answer).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
from asgi_lifespan import LifespanManager

from app.core.rules.messages import message_tokens
from app.main import create_app
from app.settings import Settings
from bench.common import check
from bench.context_scoring import host_turns
from bench.conversations import Conversation

TAIL = 64  # the plugin's assembleTailMessages default
TOOLS = [  # what an OpenClaw agent with this plugin offers the model
    "read",
    "write",
    "edit",
    "exec",
    "archive_expand",
    "archive_search",
    "memory_search",
    "memory_commit",
]


@asynccontextmanager
async def service(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """The app with its lifespan (the model, the Phase 2 worker) and a client bound to it."""
    app = create_app(settings)  # the settings say WARNING: no line per request
    async with LifespanManager(app, startup_timeout=120, shutdown_timeout=60) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://bench.test", timeout=120
        ) as client:
            yield client


def session_key(conv: Conversation) -> str:
    return f"agent:main:bench:{conv.id}"


def transcript(conv: Conversation) -> list[dict[str, Any]]:
    """The host's transcript: one message per conversation turn, as the host stores them."""
    out: list[dict[str, Any]] = []
    for t in conv.turns:
        at = int(t.at.timestamp() * 1000)
        if t.speaker == conv.speakers[0]:
            out.append({"role": "user", "content": t.text, "timestamp": at})
        else:
            out.append(
                {
                    "role": "assistant",
                    "content": [{"type": "text", "text": t.text}],
                    "timestamp": at,
                }
            )
    return out


async def replay(
    client: httpx.AsyncClient, conv: Conversation, messages: list[dict[str, Any]], budget: int
) -> int:
    """Every host turn through ``/commit-turn``; the number of turns."""
    turns = host_turns([m["role"] for m in messages])
    for n, turn in enumerate(turns):
        body = {
            "sessionId": conv.id,
            "sessionKey": session_key(conv),
            "advancementKey": f"{conv.id}:turn:{n}",
            "admission": {"entryId": f"{conv.id}:entry:{turn[0]}"},
            "runtimeContext": {"tokenBudget": budget},
            "messages": [messages[i] for i in turn],
        }
        answer = check(await client.post("/commit-turn", json=body))
        if answer["status"] != "committed":
            raise RuntimeError(f"turn {n} of {conv.id} was not committed: {answer}")
    return len(turns)


async def wait_for_phase2(
    client: httpx.AsyncClient, session_ids: list[str], timeout_s: float
) -> int:
    """Wait until every archive of the sessions has completed Phase 2; their number."""
    deadline = time.monotonic() + timeout_s
    while True:
        archives = [
            a
            for sid in session_ids
            for a in check(await client.get(f"/sessions/{sid}"))["archives"]
        ]
        failed = [a for a in archives if a["status"] == "failed"]
        if failed:
            raise RuntimeError(f"Phase 2 failed: {failed[:3]}")
        if all(a["status"] == "completed" for a in archives):
            return len(archives)
        if time.monotonic() > deadline:
            waiting = sum(1 for a in archives if a["status"] != "completed")
            raise RuntimeError(f"{waiting} archives still not completed after {timeout_s:.0f} s")
        await asyncio.sleep(0.5)


@dataclass
class Asked:
    """What the model would receive for one question, and what the service said about it."""

    messages: list[Any]  # the plugin's result: the messages left out, then the tool_loop answer
    additions: list[str | None]  # systemPromptAddition of the pre_prompt and tool_loop answers
    estimated_tokens: int  # as the plugin reports it to the host
    injected: list[Any] = field(default_factory=list)  # tool_loop messages the pre_prompt lacked
    diagnostics: dict[str, Any] = field(default_factory=dict)


def _assemble_body(
    conv: Conversation, phase: str, messages: list[Any], prompt: str, budget: int
) -> dict[str, Any]:
    omitted = max(0, len(messages) - TAIL)
    body: dict[str, Any] = {
        "sessionId": conv.id,
        "sessionKey": session_key(conv),
        "phase": phase,
        "messages": messages[omitted:],
        "tokenBudget": budget,
        "prompt": prompt,
        "availableTools": TOOLS,
    }
    if omitted:
        body["omittedMessageCount"] = omitted
    return body


def _passthrough_reason(answer: dict[str, Any]) -> str | None:
    diagnostics = answer.get("diagnostics") or {}
    return diagnostics.get("reason") if diagnostics.get("mode") == "passthrough" else None


async def _assemble(
    client: httpx.AsyncClient,
    conv: Conversation,
    phase: str,
    messages: list[Any],
    prompt: str,
    budget: int,
) -> tuple[list[Any], dict[str, Any]]:
    """One assemble as the plugin makes it: (the messages the host gets, the service's answer)."""
    body = _assemble_body(conv, phase, messages, prompt, budget)
    answer = check(await client.post("/assemble", json=body))
    omitted = body.get("omittedMessageCount", 0)
    if omitted and _passthrough_reason(answer) == "host_history_needed":
        body = {**body, "messages": messages}
        body.pop("omittedMessageCount")
        answer = check(await client.post("/assemble", json=body))
        omitted = 0
    if omitted and _passthrough_reason(answer) is not None:
        return messages, answer  # a passthrough of the tail: the host keeps its own history
    head = messages[:omitted] if phase == "tool_loop" else []
    return head + list(answer["messages"]), answer


async def ask(
    client: httpx.AsyncClient,
    conv: Conversation,
    history: list[dict[str, Any]],
    question: str,
    budget: int,
) -> Asked:
    """The pre_prompt assemble, then the tool_loop assemble on its answer."""
    pre_messages, pre = await _assemble(client, conv, "pre_prompt", history, question, budget)
    final, tool = await _assemble(client, conv, "tool_loop", pre_messages, question, budget)
    head = final[: len(final) - len(tool["messages"])]
    shown = {repr(m) for m in pre_messages}
    injected = [m for m in tool["messages"] if repr(m) not in shown]
    return Asked(
        messages=final,
        additions=[pre.get("systemPromptAddition"), tool.get("systemPromptAddition")],
        estimated_tokens=int(tool["estimatedTokens"]) + sum(message_tokens(m) for m in head),
        injected=injected,
        diagnostics={"pre_prompt": pre["diagnostics"], "tool_loop": tool["diagnostics"]},
    )


async def search_text(client: httpx.AsyncClient, conv: Conversation, question: str) -> str:
    """What one ``archive_search`` call gives the model: the ranked top 5, as the tool's text."""
    response = await client.post(
        "/archives/search",
        json={
            "sessionId": conv.id,
            "query": question,
            "mode": "ranked",
            "limit": 5,
            "format": "text",
        },
    )
    if response.status_code >= 300:
        raise RuntimeError(f"/archives/search -> {response.status_code}: {response.text[:300]}")
    return response.text
