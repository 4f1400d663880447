"""A loopback OpenAI-compatible ``/embeddings`` endpoint with deterministic vectors.

Both services under test are pointed at it (the peer under ``/peer/v1``, this service under
``/ours/v1``), so neither needs a model or the network. Each input gets a unit vector seeded from
the SHA-256 of its text: the same text always gets the same vector, in the dimension the request
asks for (``dimensions``) or the default given on the command line. ``GET /stats`` answers the
number of calls and inputs per prefix.

    python -m bench.peer.stub --port P [--dimension 384]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def vector(text: str, dimension: int) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:8], "big")
    rng = random.Random(seed)
    values = [rng.gauss(0.0, 1.0) for _ in range(dimension)]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


class _Handler(BaseHTTPRequestHandler):
    server: _StubServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        return

    def _reply(self, status: int, payload: object) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        if self.path.rstrip("/") == "/stats":
            with self.server.lock:
                self._reply(200, self.server.stats)
        elif self.path.rstrip("/") == "/health":
            self._reply(200, {"ok": True})
        else:
            self._reply(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        length = int(self.headers.get("content-length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            self._reply(400, {"error": {"message": "invalid JSON"}})
            return
        if not self.path.rstrip("/").endswith("/embeddings"):
            self._reply(404, {"error": {"message": f"no route {self.path}"}})
            return
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list):
            self._reply(400, {"error": {"message": "input must be a string or a list"}})
            return
        dimension = int(body.get("dimensions") or self.server.dimension)
        prefix = self.path.split("/", 2)[1] if self.path.count("/") > 1 else ""
        with self.server.lock:
            entry = self.server.stats.setdefault(prefix, {"calls": 0, "inputs": 0})
            entry["calls"] += 1
            entry["inputs"] += len(inputs)
        data = [
            {"object": "embedding", "index": i, "embedding": vector(str(text), dimension)}
            for i, text in enumerate(inputs)
        ]
        tokens = sum(max(1, len(str(text)) // 4) for text in inputs)
        self._reply(200, {
            "object": "list",
            "data": data,
            "model": body.get("model") or "stub",
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        })


class _StubServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, dimension: int) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.dimension = dimension
        self.lock = threading.Lock()
        self.stats: dict[str, dict[str, int]] = {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dimension", type=int, default=384)
    args = parser.parse_args()
    _StubServer(args.port, args.dimension).serve_forever()


if __name__ == "__main__":
    main()
