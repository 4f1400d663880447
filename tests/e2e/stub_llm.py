"""A small OpenAI-compatible chat and embeddings server on loopback with scripted answers, for end-to-end tests."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.helpers.loopback import serve_on_loopback, stop_server

Answer = tuple[int, dict[str, Any] | str, dict[str, str]]
Responder = Callable[[dict[str, Any]], Answer]


def chat_answer(
    content: str | None = None,
    tool_arguments: Any = None,
    usage: tuple[int, int] = (100, 50),
    tool_name: str = "update_working_memory",
) -> Answer:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_arguments is not None:
        arguments = (
            tool_arguments if isinstance(tool_arguments, str) else json.dumps(tool_arguments)
        )
        message["tool_calls"] = [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": tool_name, "arguments": arguments},
            }
        ]
    body = {
        "id": "x",
        "object": "chat.completion",
        "model": "stub-model",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": sum(usage),
        },
    }
    return 200, body, {}


def error_answer(status: int, retry_after: str | None = None) -> Answer:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return status, {"error": {"message": f"stub error {status}"}}, headers


def _vector(text: str) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [((digest[i % 32] + i) % 17 - 8) / 8 for i in range(384)]


@dataclass
class StubLLM:
    """Answers CREATE calls (no tools) and UPDATE calls (tools) from separate scripts."""

    create: list[Responder] = field(default_factory=list)
    update: list[Responder] = field(default_factory=list)
    default_create: Responder | None = None
    default_update: Responder | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    by_tool: dict[str, list[Responder]] = field(default_factory=dict)
    embedding_inputs: list[str] = field(default_factory=list)

    def embed(self, body: dict[str, Any]) -> Answer:
        """An OpenAI-compatible /embeddings answer: a deterministic 384-d vector per input."""
        inputs = body.get("input") or []
        self.embedding_inputs.extend(inputs)
        data = [
            {"object": "embedding", "index": i, "embedding": _vector(text)}
            for i, text in enumerate(inputs)
        ]
        return 200, {"object": "list", "data": data, "model": body.get("model", "stub")}, {}

    def answer(self, body: dict[str, Any]) -> Answer:
        self.requests.append(body)
        tool = body["tools"][0]["function"]["name"] if body.get("tools") else None
        if tool in self.by_tool:
            script = self.by_tool[tool]
            return script.pop(0)(body) if script else chat_answer(tool_arguments={}, tool_name=tool)
        is_update = bool(body.get("tools"))
        script = self.update if is_update else self.create
        if script:
            return script.pop(0)(body)
        fallback = self.default_update if is_update else self.default_create
        if fallback is None:
            return error_answer(500)
        return fallback(body)

    def start(self) -> str:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                status, payload, headers = (
                    stub.embed(body) if self.path.endswith("/embeddings") else stub.answer(body)
                )
                data = (
                    payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                )
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                return

        self.server, base_url = serve_on_loopback(Handler)
        return base_url

    def stop(self) -> None:
        stop_server(self.server)

    def update_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r.get("tools")]
