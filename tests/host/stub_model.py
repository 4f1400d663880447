"""A scripted OpenAI-compatible streaming chat model on loopback, for the OpenClaw host test.

The host always streams (`stream: true`), so every answer is Server-Sent Events. The answer is
chosen by markers in the current user message (the last `user` message of the request):

- `READFILE <path>`: call the host's real `read` tool on that path, then answer with what it read;
- `OVERFLOW-ONCE-<tag>`: the first request that carries this marker is refused with a 400
  "maximum context length" error (the host compacts and retries), later ones are answered;
- `EXPAND-ARCHIVE`: call `archive_expand` with the oldest archive id visible in the request
  (directly, or through the host's `tool_call` when tool search defers plugin tools), then answer
  with what the tool returned;
- `SEARCH-ARCHIVE: <question>`: call `archive_search` with the question as its query and no mode
  (the tool's default), then answer with what the tool returned;
- anything else: `ECHO: <prompt>`.

Every request and every answer is recorded.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ARCHIVE_ID = re.compile(r"\barchive_\d{3,}\b")
# The host prefixes user text with its own timestamp, e.g. "[Mon 2026-11-23 06:41 UTC] ".
# The first half of U+1F642's UTF-16 pair, alone (JSON carries it as the escape \ud83d).
CUT_EMOJI = "\ud83d"
HOST_TIME_PREFIX = re.compile(
    r"^\[[A-Z][a-z]{2} \d{4}-\d{2}-\d{2} \d{2}:\d{2}(?::\d{2})? [A-Z]{2,5}\] "
)


def text_of(content: Any) -> str:
    """The text of an OpenAI message content (a string or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", ""))
            for p in content
            if isinstance(p, dict) and p.get("type") == "text"
        )
    return ""


def strip_host_prefix(text: str) -> str:
    return HOST_TIME_PREFIX.sub("", text, count=1)


RECALL_OPEN, RECALL_CLOSE = "<openviking-context>", "</openviking-context>"
# User messages that the host or the service add around the user's own words.
NOT_THE_PROMPT = (
    "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT",
    "<openviking-context>",
    "[Session History Summary]",
)


def current_prompt(messages: list[dict[str, Any]]) -> tuple[int, str]:
    """The user's current message and its index: the last user message that is not host or
    service context (-1 and "" when there is none)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") != "user":
            continue
        content = message.get("content")
        parts = [content] if isinstance(content, str) else [text_of([p]) for p in content or []]
        for part in reversed(parts):
            text = strip_host_prefix(part.lstrip())
            if text.startswith(RECALL_OPEN) and RECALL_CLOSE in text:
                # a host that reads prependContext (2026.7, 2026.8) puts it before the user's words
                text = text.split(RECALL_CLOSE, 1)[1].strip()
            if text and not text.startswith(NOT_THE_PROMPT) and not text.startswith("Runtime: "):
                # the host appends a "Runtime: agent=… | session=…" line to the user's text
                return index, text.split("\n\nRuntime: ", 1)[0].strip()
    return -1, ""


@dataclass
class Exchange:
    """One request the model received and what it answered."""

    n: int
    at: float
    body: dict[str, Any]
    prompt: str
    kind: str  # text | tool_call | overflow
    text: str = ""
    tool_call: dict[str, Any] | None = None
    visible_archive_ids: list[str] = field(default_factory=list)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])


def plugin_tool_call(
    body: dict[str, Any], n: int, name: str, arguments: dict[str, Any]
) -> dict[str, Any]:
    """A call of one of the plugin's tools: direct when the request lists its schema, else through
    the host's ``tool_call`` (with its default tool search, plugin tools are deferred)."""
    direct = any(t.get("function", {}).get("name") == name for t in body.get("tools") or [])
    if direct:
        return {"id": f"call_stub_{n}", "name": name, "arguments": arguments}
    return {
        "id": f"call_stub_{n}",
        "name": "tool_call",
        "arguments": {"id": name, "args": arguments},
    }


class StubModel:
    def __init__(self, model_id: str = "stub-1") -> None:
        self.model_id = model_id
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()
        self._overflowed: set[str] = set()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> str:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._json(
                        200, {"object": "list", "data": [{"id": stub.model_id, "object": "model"}]}
                    )
                else:
                    self._json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                try:
                    body = json.loads(raw)
                except ValueError:
                    self._json(400, {"error": {"message": "bad json"}})
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._json(404, {"error": {"message": "not found"}})
                    return
                exchange = stub._decide(body)
                if exchange.kind == "overflow":
                    self._json(
                        400,
                        {
                            "error": {
                                "message": "This model's maximum context length is 32000 tokens. However, your "
                                "messages resulted in 40000 tokens. Please reduce the length of the messages.",
                                "type": "invalid_request_error",
                                "code": "context_length_exceeded",
                            }
                        },
                    )
                    return
                self._stream(exchange)

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, exchange: Exchange) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                for chunk in stub._chunks(exchange):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="stub-model", daemon=True
        )
        self._thread.start()
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    # -- script ------------------------------------------------------------------------------
    def _decide(self, body: dict[str, Any]) -> Exchange:
        messages = body.get("messages") or []
        at, prompt = current_prompt(messages)
        # Tool results of this turn come after the prompt (the host may add context after them).
        results = [m for m in messages[at + 1 :] if m.get("role") == "tool"] if at >= 0 else []
        request_text = "\n".join(text_of(m.get("content")) for m in messages)
        with self._lock:
            n = len(self.exchanges) + 1
            ex = Exchange(
                n=n,
                at=time.time(),
                body=body,
                prompt=prompt,
                kind="text",
                visible_archive_ids=sorted(set(ARCHIVE_ID.findall(request_text))),
            )
            if results:
                ex.text = f"TOOL-RESULT-SEEN: {text_of(results[-1].get('content'))}"
            elif (m := re.search(r"OVERFLOW-ONCE-\w+", prompt)) and m.group(
                0
            ) not in self._overflowed:
                # once per marker: the host retries with the prompt rewritten around the marker
                self._overflowed.add(m.group(0))
                ex.kind = "overflow"
            elif m := re.search(r"READFILE (\S+)", prompt):
                ex.kind = "tool_call"
                ex.tool_call = {
                    "id": f"call_stub_{n}",
                    "name": "read",
                    "arguments": {"path": m.group(1)},
                }
            elif "EXPAND-ARCHIVE" in prompt:
                ex.kind = "tool_call"
                # the oldest archive the model can see; archive_001 when it sees none
                arguments = {
                    "archiveId": ex.visible_archive_ids[0]
                    if ex.visible_archive_ids
                    else "archive_001"
                }
                ex.tool_call = plugin_tool_call(body, n, "archive_expand", arguments)
            elif m := re.search(r"SEARCH-ARCHIVE: (.+)", prompt):
                ex.kind = "tool_call"
                # the question as the model would ask it, with no mode: the tool's default runs
                query = {"query": m.group(1).strip()}
                ex.tool_call = plugin_tool_call(body, n, "archive_search", query)
            elif "CUT-EMOJI" in prompt:
                # a reply cut inside an emoji: its last UTF-16 code unit is a lone surrogate
                ex.text = f"ECHO: {prompt} {CUT_EMOJI}"
            else:
                ex.text = f"ECHO: {prompt}"
            self.exchanges.append(ex)
            return ex

    def _chunks(self, ex: Exchange) -> list[dict[str, Any]]:
        base = {
            "id": f"chatcmpl-stub-{ex.n}",
            "object": "chat.completion.chunk",
            "created": int(ex.at),
            "model": self.model_id,
        }
        usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
        if ex.kind == "tool_call" and ex.tool_call:
            call = ex.tool_call
            delta = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "index": 0,
                        "id": call["id"],
                        "type": "function",
                        "function": {
                            "name": call["name"],
                            "arguments": json.dumps(call["arguments"]),
                        },
                    }
                ],
            }
            return [
                {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
                {**base, "choices": [], "usage": usage},
            ]
        return [
            {
                **base,
                "choices": [
                    {
                        "index": 0,
                        "delta": {"role": "assistant", "content": ""},
                        "finish_reason": None,
                    }
                ],
            },
            {
                **base,
                "choices": [{"index": 0, "delta": {"content": ex.text}, "finish_reason": None}],
            },
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {**base, "choices": [], "usage": usage},
        ]

    # -- queries -----------------------------------------------------------------------------
    def since(self, n: int) -> list[Exchange]:
        with self._lock:
            return [e for e in self.exchanges if e.n > n]

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.exchanges)
