"""The uvicorn server of ``serve``: its HTTP protocol with a header read timeout, and the JSON
error envelope for requests the HTTP parser itself rejects (a ``Content-Length: -5``).

uvicorn bounds idle keep-alive connections but not a client that trickles its headers: 150 such
connections stayed open for as long as their clients liked. Here a connection that has not sent a
complete request head within ``CE_HTTP__HEADER_TIMEOUT_S`` is answered 408 and closed. The body
read timeout is in ``RequestContextMiddleware`` (it works under any ASGI server).
"""

from __future__ import annotations

import asyncio
import gc
import socket
import sys
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from app.errors import error_envelope_bytes
from app.settings import Settings


def envelope_response(status: int, reason: str, code: str, message: str) -> bytes:
    """A complete HTTP/1.1 response carrying the API's error envelope; the connection closes."""
    body = error_envelope_bytes(code, message)
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class TimedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a deadline on each request head."""

    header_timeout_s = 10.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_timer()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm_head_timer()

    def on_headers_complete(self) -> None:
        self._cancel_head_timer()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        """The parser's own 400 (malformed request line, ``Content-Length: -5``) as an envelope."""
        self.transport.write(
            envelope_response(
                400, "Bad Request", "INVALID_ARGUMENT", f"malformed HTTP request: {msg}"
            )
        )
        self.transport.close()

    def _arm_head_timer(self) -> None:
        self._cancel_head_timer()
        self._head_timer = self.loop.call_later(self.header_timeout_s, self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        # A request whose head arrived has its own cycle; only a missing or trickling head is cut.
        if self.transport.is_closing() or (
            self.cycle is not None and not self.cycle.response_complete
        ):
            return
        message = f"the request head did not arrive within {self.header_timeout_s:g} s"
        self.transport.write(envelope_response(408, "Request Timeout", "REQUEST_TIMEOUT", message))
        self.transport.close()


class ServiceServer(uvicorn.Server):
    """uvicorn's server, with the heap it built while starting kept out of garbage collection.

    Once the app has started, nearly every object in the process (modules, the ORM's mappings, the
    models, the routes: 170,000 and more) lives as long as the process. The collector's oldest
    generation still walked them all each time it ran, every few dozen requests that carry a
    long history, in the middle of a request. ``gc.freeze`` moves them to a
    permanent generation the collector leaves alone, so it walks only what requests allocate.

    Its youngest generation is then collected every 20,000 new container objects, not every 700:
    a pre-prompt assemble decodes the host's 600 KB history into some 50,000 objects that live
    as long as the request. At 700 the collector ran eleven times during one, promoting them to
    the middle generation and walking them there again; at 20,000 it runs once every few such requests, when most of what they allocated has been freed.

    A thread that runs Python code without pause (redacting a megabyte tool result, chunking a
    long memory) gives the interpreter's lock up only when the switch interval has passed, and a
    small request's thread needs the lock back after each statement or socket write it waits on.
    A shorter interval than the interpreter's default hands the lock back sooner, at no cost
    measurable in the throughput benchmark (bench/RESULTS.md, "Measurements behind the code").
    """

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        freeze_startup_heap()
        sys.setswitchinterval(SWITCH_INTERVAL_S)


YOUNG_GENERATION_THRESHOLD = 20_000
SWITCH_INTERVAL_S = 0.001


def freeze_startup_heap() -> None:
    """Collect the garbage of start-up, exempt what is left from later collections, and collect
    the youngest generation less often (ServiceServer)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD, *gc.get_threshold()[1:])


def server_config(settings: Settings, app: Any) -> uvicorn.Config:
    """The uvicorn configuration of ``serve``."""
    protocol = type(
        "TimedHttpProtocol",
        (TimedHttpProtocol,),
        {"header_timeout_s": settings.http.header_timeout_s},
    )
    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        http=protocol,
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=10,
    )
