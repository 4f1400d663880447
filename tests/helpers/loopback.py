"""A threaded HTTP server on a free loopback port, for the stub model and embedding servers."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def serve_on_loopback(handler: type[BaseHTTPRequestHandler]) -> tuple[ThreadingHTTPServer, str]:
    """Start serving in a daemon thread; returns the server and its OpenAI-style base URL (…/v1)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


def stop_server(server: ThreadingHTTPServer) -> None:
    server.shutdown()
    server.server_close()
