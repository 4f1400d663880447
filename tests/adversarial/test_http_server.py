"""The HTTP layer of ``serve`` (a real server process): a client that trickles its request head or
body is cut off with a 408, and a request the HTTP parser rejects still gets the JSON envelope."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from app.api.http_server import (
    SWITCH_INTERVAL_S,
    YOUNG_GENERATION_THRESHOLD,
    ServiceServer,
    server_config,
)
from app.main import create_app
from app.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
# Hang guards only: a server that keeps the connection open fails these, however slow the machine.
GUARD_S = 20


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("CE_")},
        "CE_DATABASE_URL": f"sqlite:///{tmp_path_factory.mktemp('http') / 'ce.db'}",
        "CE_PORT": str(port),
        "CE_LOG_LEVEL": "WARNING",
        "CE_EMBEDDING__PROVIDER": "none",
        "CE_HTTP__HEADER_TIMEOUT_S": "1",
        "CE_HTTP__BODY_TIMEOUT_S": "1",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "serve"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline and process.poll() is None, "server did not start"
            time.sleep(0.1)
        yield "127.0.0.1", port
    finally:
        process.terminate()
        process.wait(timeout=30)


def read_until_closed(sock: socket.socket) -> bytes:
    sock.settimeout(GUARD_S)
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def envelope(raw: bytes) -> tuple[int, dict]:
    head, _, body = raw.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    assert b"content-type: application/json" in head.lower()
    return status, json.loads(body)


@pytest.mark.slow
def test_a_connection_that_never_sends_its_head_is_closed_with_408(server: tuple[str, int]) -> None:
    with socket.create_connection(server) as sock:
        status, body = envelope(read_until_closed(sock))
    assert status == 408 and body["error"]["code"] == "REQUEST_TIMEOUT"


@pytest.mark.slow
def test_a_head_trickled_past_the_header_timeout_is_cut_off(server: tuple[str, int]) -> None:
    # 150 such connections stayed open for as long as their clients liked.
    with socket.create_connection(server) as sock:
        sock.sendall(b"POST /after-turn HTTP/1.1\r\nHost: x\r\n")
        started = time.monotonic()
        try:
            while time.monotonic() - started < GUARD_S:
                sock.sendall(b"X")  # one byte of a header at a time, forever
                time.sleep(0.2)
        except (BrokenPipeError, ConnectionResetError):
            pass
        else:
            pytest.fail("the server kept the trickling connection open")


@pytest.mark.slow
def test_a_body_trickled_past_the_body_timeout_is_cut_off(server: tuple[str, int]) -> None:
    body = json.dumps(
        {"sessionId": "s-trickle", "messages": [{"role": "user", "content": "hi"}]}
    ).encode()
    with socket.create_connection(server) as sock:
        sock.sendall(
            b"POST /after-turn HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
            + f"content-length: {len(body)}\r\n\r\n".encode()
            + body[:5]
        )
        sock.settimeout(GUARD_S)
        raw = b""
        for byte in body[5:]:
            try:
                sock.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                break
            time.sleep(0.3)
            sock.setblocking(False)
            try:
                raw += sock.recv(65536)
            except BlockingIOError:
                pass
            finally:
                sock.setblocking(True)
            if raw:
                break
        raw += read_until_closed(sock)
    status, answer = envelope(raw)
    assert status == 408 and answer["error"]["code"] == "REQUEST_TIMEOUT"
    assert httpx.get(f"http://{server[0]}:{server[1]}/sessions/s-trickle").status_code == 404


@pytest.mark.slow
@pytest.mark.parametrize("length", [b"-5", b"abc", b"99999999999999999999999"])
def test_a_bad_content_length_gets_the_json_envelope(
    server: tuple[str, int], length: bytes
) -> None:
    # "Content-Length: -5" got the HTTP layer's plain-text 400.
    with socket.create_connection(server) as sock:
        sock.sendall(
            b"POST /after-turn HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: "
            + length
            + b"\r\n\r\n{}"
        )
        status, body = envelope(read_until_closed(sock))
    assert status in (400, 413) and body["error"]["code"] in (
        "INVALID_ARGUMENT",
        "PAYLOAD_TOO_LARGE",
    )
    assert status == 400 or length == b"99999999999999999999999"


async def test_serve_keeps_its_start_up_heap_out_of_collections_and_switches_threads_often(
    make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings()
    config = server_config(settings, create_app(settings))
    config.port = 0  # any free port
    server = ServiceServer(config)
    gc.unfreeze()
    thresholds = gc.get_threshold()
    switch_interval = sys.getswitchinterval()
    serving = asyncio.create_task(server.serve())
    try:
        async with asyncio.timeout(GUARD_S):
            while not server.started:  # noqa: ASYNC110 - uvicorn offers a flag, not an event
                await asyncio.sleep(0.01)
        # The app's start-up objects (its routes, engine, settings) are in the permanent generation.
        assert gc.get_freeze_count() > 10_000
        # Request garbage is collected in larger batches than the interpreter's default 700.
        assert gc.get_threshold() == (YOUNG_GENERATION_THRESHOLD, *thresholds[1:])
        assert thresholds[0] < YOUNG_GENERATION_THRESHOLD
        # A busy thread hands the interpreter's lock on after 1 ms, not the default 5.
        assert sys.getswitchinterval() == SWITCH_INTERVAL_S < switch_interval
    finally:
        server.should_exit = True
        await serving
        gc.unfreeze()
        gc.set_threshold(*thresholds)
        sys.setswitchinterval(switch_interval)
