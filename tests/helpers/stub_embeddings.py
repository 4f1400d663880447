"""An OpenAI-compatible /embeddings endpoint on loopback with cheap deterministic vectors."""

from __future__ import annotations

import hashlib
import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.helpers.loopback import serve_on_loopback, stop_server

DIMENSIONS = 384


def vector_of(text: str) -> list[float]:
    """Two buckets picked by the text's hash: distinct texts get distinct unit-length directions."""
    digest = hashlib.sha256(text.encode()).digest()
    vector = [0.0] * DIMENSIONS
    vector[digest[0] % DIMENSIONS] += 1.0
    vector[(digest[1] * 7 + 3) % DIMENSIONS] += 0.5
    return vector


class StubEmbeddings:
    def __init__(self) -> None:
        self.calls = 0
        self.texts = 0
        # Once this many texts are embedded, each request takes ``slow_s`` longer: a command can
        # then be interrupted mid-run however fast the machine is.
        self.slow_after: int | None = None
        self.slow_s = 0.2
        # While set, every request is answered with this status and no vectors.
        self.fail_with: int | None = None
        # Texts given a vector of the test's choosing instead of ``vector_of``'s.
        self.chosen: dict[str, list[float]] = {}

    def start(self) -> str:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body: dict[str, Any] = json.loads(
                    self.rfile.read(int(self.headers.get("content-length", 0)))
                )
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                stub.calls += 1
                stub.texts += len(texts)
                if stub.slow_after is not None and stub.texts > stub.slow_after:
                    time.sleep(stub.slow_s)
                if stub.fail_with is not None:
                    self.send_response(stub.fail_with)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                data = json.dumps(
                    {
                        "object": "list",
                        "model": body.get("model"),
                        "data": [
                            {
                                "object": "embedding",
                                "index": i,
                                "embedding": stub.chosen.get(t) or vector_of(t),
                            }
                            for i, t in enumerate(texts)
                        ],
                    }
                ).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                return

        self.server, base_url = serve_on_loopback(Handler)
        return base_url

    def stop(self) -> None:
        stop_server(self.server)
