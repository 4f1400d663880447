"""The same logical operations, spoken to each service in its own API.

A ``Request`` is prepared (URL and body serialised) before any clock starts; a ``Side`` turns a
logical operation (store a turn, commit, rebuild history, read an archive, search archives) into
the requests that service needs, and checks the answers outside the timed section.

OpenViking receives messages the way its OpenClaw plugin sends them (``afterTurn``): one
``POST /api/v1/sessions/{id}/messages`` per message with ``parts``; a tool result becomes an
assistant message with one self-contained ``tool`` part (the call's input looked up by id) and an
assistant tool call keeps only its text. After the messages the plugin reads the session
(``GET /api/v1/sessions/{id}``) for ``pending_tokens``. This service receives the turn as
OpenClaw 2026.9 sends it: one ``POST /commit-turn`` with this turn's messages.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import httpx

from bench.common import JSON_HEADERS, encode
from bench.workload import Message

BUDGET = 128000
SEARCH_LIMIT = 20
# A pre-prompt assemble sends the newest this many of the host's messages, as the plugin does by
# default (clients/openclaw, assembleTailMessages).
PLUGIN_TAIL = 64


@dataclass(frozen=True)
class Request:
    method: str
    url: str
    body: bytes | None = None


def send(client: httpx.Client, request: Request) -> httpx.Response:
    if request.body is None:
        return client.request(request.method, request.url)
    return client.request(request.method, request.url, content=request.body, headers=JSON_HEADERS)


def ok(response: httpx.Response) -> Any:
    if response.status_code >= 300:
        raise RuntimeError(
            f"{response.request.method} {response.request.url} -> {response.status_code}: {response.text[:500]}"
        )
    return response.json()


def run(client: httpx.Client, requests: list[Request]) -> list[httpx.Response]:
    """Send the requests in order; the first failure raises (after the clock, by the caller)."""
    return [send(client, r) for r in requests]


def _text(message: Message) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content.strip()
    return " ".join(
        b["text"].strip() for b in content or [] if b.get("type") == "text" and b.get("text")
    ).strip()


_REGEX_SPECIALS = re.compile(r"[.*+?^${}()|\[\]\\]")


def _escape(term: str) -> str:
    """Regex metacharacters escaped, as the OpenClaw plugin escapes a search term (spaces stay)."""
    return _REGEX_SPECIALS.sub(lambda m: "\\" + m.group(0), term)


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat().replace("+00:00", "Z")


def to_openviking(
    messages: list[Message], inputs: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """OpenClaw messages → OpenViking add-message bodies, as the OpenClaw plugin maps them."""
    inputs = dict(inputs or {})
    for m in messages:
        if m["role"] == "assistant" and isinstance(m.get("content"), list):
            for block in m["content"]:
                if block.get("type") == "toolCall":
                    inputs[block["id"]] = block.get("arguments") or {}
    out: list[dict[str, Any]] = []
    for m in messages:
        created = _iso(m["timestamp"])
        if m["role"] == "toolResult":
            output = _text(m)
            if not output:
                continue
            out.append(
                {
                    "role": "assistant",
                    "created_at": created,
                    "parts": [
                        {
                            "type": "tool",
                            "tool_id": m["toolCallId"],
                            "tool_name": m.get("toolName") or "tool",
                            "tool_input": inputs.get(m["toolCallId"], {}),
                            "tool_output": output,
                            "tool_status": "error" if m.get("isError") else "completed",
                        }
                    ],
                }
            )
            continue
        text = _text(m)
        if text:
            out.append(
                {
                    "role": "assistant" if m["role"] == "assistant" else "user",
                    "created_at": created,
                    "parts": [{"type": "text", "text": text}],
                }
            )
    return out


class Side:
    """One service; ``name`` is ``ours`` or ``peer``."""

    name: str
    label: str

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self._turns = 0

    def client(self, timeout: float = 120.0) -> httpx.Client:
        return httpx.Client(base_url=self.base_url, timeout=timeout)

    # Setup (untimed) ------------------------------------------------------------------------
    def create(self, client: httpx.Client, sid: str) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def seed(self, client: httpx.Client, sid: str, messages: list[Message]) -> None:
        raise NotImplementedError

    def stored(self, client: httpx.Client, sid: str) -> int:
        """Messages the session holds in total (live and archived)."""
        raise NotImplementedError

    def archive_ids(self, client: httpx.Client, sid: str) -> list[str]:
        raise NotImplementedError

    def wait_archives(self, client: httpx.Client, sid: str, timeout_s: float = 300) -> None:
        """Until every archive of the session has finished Phase 2."""
        raise NotImplementedError

    # Timed operations: prepared requests ----------------------------------------------------
    def turn(self, sid: str, messages: list[Message]) -> list[Request]:
        raise NotImplementedError

    def check_turn(self, responses: list[httpx.Response], count: int) -> None:
        raise NotImplementedError

    def commit(self, sid: str, keep: int) -> Request:
        raise NotImplementedError

    def check_commit(self, response: httpx.Response, archived: int) -> None:
        raise NotImplementedError

    def rebuild(
        self, sid: str, transcript: list[Message], prompt: str, whole: bool = False
    ) -> Request:
        """The history rebuild; ``whole``: a client that sends the host's whole transcript."""
        raise NotImplementedError

    def rebuild_summary(self, response: httpx.Response) -> str:
        raise NotImplementedError

    def archive_read(self, sid: str, archive_id: str) -> Request:
        raise NotImplementedError

    def archive_messages(self, response: httpx.Response) -> int:
        raise NotImplementedError

    def search(self, sid: str, term: str) -> Request:
        raise NotImplementedError

    def hits(self, response: httpx.Response) -> int:
        raise NotImplementedError


class Ours(Side):
    name = "ours"
    label = "context-engine"

    def create(self, client: httpx.Client, sid: str) -> None:
        return  # a session exists from its first stored turn

    def _commit_turn(self, sid: str, messages: list[Message]) -> Request:
        self._turns += 1
        body = {
            "sessionId": sid,
            "advancementKey": f"{sid}:turn:{self._turns}",
            "messages": messages,
        }
        return Request("POST", "/commit-turn", encode(body))

    def seed(self, client: httpx.Client, sid: str, messages: list[Message]) -> None:
        for start in range(0, len(messages), 1000):
            chunk = messages[start : start + 1000]
            self.check_turn([send(client, self._commit_turn(sid, chunk))], len(chunk))

    def stored(self, client: httpx.Client, sid: str) -> int:
        return int(ok(client.get(f"/sessions/{quote(sid)}"))["totalMessageCount"])

    def archive_ids(self, client: httpx.Client, sid: str) -> list[str]:
        return [a["archiveId"] for a in ok(client.get(f"/sessions/{quote(sid)}"))["archives"]]

    def wait_archives(self, client: httpx.Client, sid: str, timeout_s: float = 300) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            archives = ok(client.get(f"/sessions/{quote(sid)}"))["archives"]
            pending = [a for a in archives if a["status"] not in ("completed", "failed")]
            failed = [a for a in archives if a["status"] == "failed"]
            if failed:
                raise RuntimeError(f"{self.name}: archive failed: {failed[0]}")
            if not pending:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name}: {len(pending)} archives still pending")
            time.sleep(0.05)

    def turn(self, sid: str, messages: list[Message]) -> list[Request]:
        return [self._commit_turn(sid, messages)]

    def check_turn(self, responses: list[httpx.Response], count: int) -> None:
        body = ok(responses[0])
        if body.get("status") != "committed" or body.get("ingested") != count:
            raise RuntimeError(f"commit-turn stored {body.get('ingested')} of {count}: {body}")

    def commit(self, sid: str, keep: int) -> Request:
        return Request(
            "POST",
            f"/sessions/{quote(sid)}/commit",
            encode({"keepRecentCount": keep, "wait": False}),
        )

    def check_commit(self, response: httpx.Response, archived: int) -> None:
        body = ok(response)
        if body.get("status") != "accepted" or not body.get("archiveId"):
            raise RuntimeError(f"commit did not archive: {body}")

    def rebuild(
        self, sid: str, transcript: list[Message], prompt: str, whole: bool = False
    ) -> Request:
        omitted = 0 if whole else max(0, len(transcript) - PLUGIN_TAIL)
        body = {
            "sessionId": sid,
            "messages": transcript[omitted:],
            "tokenBudget": BUDGET,
            "prompt": prompt,
            "phase": "pre_prompt",
            **({"omittedMessageCount": omitted} if omitted else {}),
        }
        return Request("POST", "/assemble", encode(body))

    def rebuild_summary(self, response: httpx.Response) -> str:
        body = ok(response)
        diag = body.get("diagnostics") or {}
        msgs = diag.get("messages") or {}
        overview = (diag.get("archives") or {}).get("overviewIncluded")
        if diag.get("mode") != "assembled":
            raise RuntimeError(f"ours: the rebuild was not assembled: {diag}")
        return (
            f"{len(body.get('messages') or [])} messages (stored {msgs.get('stored')}, "
            f"reconciled {msgs.get('reconciled')}), ~{body.get('estimatedTokens')} tokens, "
            f"overview {'in' if overview else 'out'}"
        )

    def archive_read(self, sid: str, archive_id: str) -> Request:
        return Request("GET", f"/archives/{quote(archive_id)}?sessionId={quote(sid)}")

    def archive_messages(self, response: httpx.Response) -> int:
        return len(ok(response).get("messages") or [])

    def search(self, sid: str, term: str) -> Request:
        body = {"sessionId": sid, "query": term, "mode": "keyword", "limit": SEARCH_LIMIT}
        return Request("POST", "/archives/search", encode(body))

    def hits(self, response: httpx.Response) -> int:
        return int(ok(response)["count"])


class Peer(Side):
    name = "peer"
    label = "OpenViking 0.5.2"

    def __init__(self, base_url: str) -> None:
        super().__init__(base_url)
        self.pending_tasks: dict[str, list[str]] = {}  # session → commit tasks not yet awaited

    def create(self, client: httpx.Client, sid: str) -> None:
        ok(client.post("/api/v1/sessions", json={"session_id": sid}))

    def seed(self, client: httpx.Client, sid: str, messages: list[Message]) -> None:
        bodies = to_openviking(messages)
        for start in range(0, len(bodies), 100):  # the batch route takes at most 100
            chunk = bodies[start : start + 100]
            result = ok(
                send(
                    client,
                    Request(
                        "POST",
                        f"/api/v1/sessions/{quote(sid)}/messages/batch",
                        encode({"messages": chunk}),
                    ),
                )
            )["result"]
            if result.get("added") != len(chunk):
                raise RuntimeError(f"peer batch stored {result.get('added')} of {len(chunk)}")

    def _meta(self, client: httpx.Client, sid: str) -> dict[str, Any]:
        return ok(client.get(f"/api/v1/sessions/{quote(sid)}"))["result"]

    def stored(self, client: httpx.Client, sid: str) -> int:
        meta = self._meta(client, sid)
        total = meta.get("total_message_count")
        return int(total if total is not None else meta["message_count"])

    def archive_ids(self, client: httpx.Client, sid: str) -> list[str]:
        count = int(self._meta(client, sid).get("commit_count") or 0)
        return [f"archive_{n:03d}" for n in range(1, count + 1)]

    def wait_task(self, client: httpx.Client, task_id: str, timeout_s: float = 300) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            task = ok(client.get(f"/api/v1/tasks/{task_id}"))["result"]
            if task["status"] == "completed":
                return
            if task["status"] in ("failed", "cancelled"):
                raise RuntimeError(f"peer commit task {task['status']}: {task.get('error')}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"peer commit task still {task['status']}")
            time.sleep(0.05)

    def wait_archives(self, client: httpx.Client, sid: str, timeout_s: float = 300) -> None:
        for task_id in self.pending_tasks.pop(sid, []):
            self.wait_task(client, task_id, timeout_s)

    def turn(self, sid: str, messages: list[Message]) -> list[Request]:
        path = f"/api/v1/sessions/{quote(sid)}"
        adds = [
            Request("POST", f"{path}/messages", encode(body)) for body in to_openviking(messages)
        ]
        return [*adds, Request("GET", path)]

    def check_turn(self, responses: list[httpx.Response], count: int) -> None:
        for response in responses:
            ok(response)
        if len(responses) - 1 != count:
            raise RuntimeError(f"peer turn sent {len(responses) - 1} messages, expected {count}")

    def commit(self, sid: str, keep: int) -> Request:
        return Request(
            "POST", f"/api/v1/sessions/{quote(sid)}/commit", encode({"keep_recent_count": keep})
        )

    def check_commit(self, response: httpx.Response, archived: int) -> None:
        result = ok(response)["result"]
        if not result.get("archived") or not result.get("task_id"):
            raise RuntimeError(f"peer commit did not archive: {result}")
        self.pending_tasks.setdefault(result["session_id"], []).append(result["task_id"])

    def rebuild(
        self, sid: str, transcript: list[Message], prompt: str, whole: bool = False
    ) -> Request:
        return Request("GET", f"/api/v1/sessions/{quote(sid)}/context?token_budget={BUDGET}")

    def rebuild_summary(self, response: httpx.Response) -> str:
        result = ok(response)["result"]
        stats = result.get("stats") or {}
        return (
            f"{len(result.get('messages') or [])} messages, ~{result.get('estimatedTokens')} tokens, "
            f"archives {stats.get('includedArchives')}/{stats.get('totalArchives')} included"
        )

    def archive_read(self, sid: str, archive_id: str) -> Request:
        return Request("GET", f"/api/v1/sessions/{quote(sid)}/archives/{quote(archive_id)}")

    def archive_messages(self, response: httpx.Response) -> int:
        return len(ok(response)["result"].get("messages") or [])

    def search(self, sid: str, term: str) -> Request:
        body = {
            "uri": f"viking://user/default/sessions/{sid}/history",
            "pattern": _escape(term),
            "case_insensitive": True,
            "node_limit": SEARCH_LIMIT,
        }
        return Request("POST", "/api/v1/search/grep", encode(body))

    def hits(self, response: httpx.Response) -> int:
        result = ok(response)["result"]
        return int(result.get("match_count", result.get("count", 0)))
