"""A loopback OpenAI-compatible ``/embeddings`` endpoint with deterministic vectors.

Both services under test are pointed at it (the peer under ``/peer/v1``, this service under
``/ours/v1``), so neither needs a model or the network. Each input gets one of 4,096 fixed random
unit vectors, chosen by the SHA-256 of its text (the same text always gets the same vector), in the
dimension the request asks for (``dimensions``) or the default given on the command line, as a JSON
list or, when the request asks for ``encoding_format: base64``, as base64 float32. Vectors are
serialised once and reused, so the stub costs microseconds per input and does not take CPU from the
servers it feeds. ``GET /stats`` answers the number of calls and inputs per prefix.

    python -m bench.peer.stub --port P [--dimension 384]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

POOL = 4096


class _Pool:
    """Pre-serialised unit vectors per dimension: JSON text and base64 float32."""

    def __init__(self) -> None:
        self._json: dict[int, list[str | None]] = {}
        self._b64: dict[int, list[str | None]] = {}
        self._lock = threading.Lock()

    def _vector(self, dimension: int, slot: int) -> np.ndarray:
        rng = np.random.default_rng([dimension, slot])
        values = rng.standard_normal(dimension).astype(np.float32)
        return values / np.linalg.norm(values)

    def get(self, text: str, dimension: int, as_base64: bool) -> str:
        slot = (
            int.from_bytes(
                hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:4], "big"
            )
            % POOL
        )
        table = self._b64 if as_base64 else self._json
        with self._lock:
            entries = table.setdefault(dimension, [None] * POOL)
            cached = entries[slot]
            if cached is None:
                vector = self._vector(dimension, slot)
                if as_base64:
                    raw = struct.pack(f"<{dimension}f", *vector.tolist())
                    cached = json.dumps(base64.b64encode(raw).decode())
                else:
                    cached = json.dumps([round(float(x), 7) for x in vector])
                entries[slot] = cached
        return cached


class _Handler(BaseHTTPRequestHandler):
    server: _StubServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        return

    def _reply(self, status: int, payload: object) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/stats":
            with self.server.lock:
                self._reply(200, self.server.stats)
        elif self.path.rstrip("/") == "/health":
            self._reply(200, {"ok": True})
        else:
            self._reply(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
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
        as_base64 = body.get("encoding_format") == "base64"
        items = ",".join(
            f'{{"object":"embedding","index":{i},"embedding":{self.server.pool.get(str(text), dimension, as_base64)}}}'
            for i, text in enumerate(inputs)
        )
        tokens = sum(max(1, len(str(text)) // 4) for text in inputs)
        model = json.dumps(body.get("model") or "stub")
        payload = (
            f'{{"object":"list","data":[{items}],"model":{model},'
            f'"usage":{{"prompt_tokens":{tokens},"total_tokens":{tokens}}}}}'
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class _StubServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, dimension: int) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.dimension = dimension
        self.pool = _Pool()
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
