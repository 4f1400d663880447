"""Kill the server (SIGKILL) while Phase 2 runs; after a restart the archive completes, nothing lost."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.helpers.messages import turn

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(db: Path, port: int, **env: str) -> subprocess.Popen[bytes]:
    environment = {
        **os.environ,
        "CE_DATABASE_URL": f"sqlite:///{db}",
        "CE_PORT": str(port),
        "CE_LOG_LEVEL": "WARNING",
        "CE_WORKER__POLL_INTERVAL_MS": "50",
        **env,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "serve"],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("server did not start")


def wait_for_status(base: str, wanted: str, timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        session = httpx.get(f"{base}/sessions/s1", timeout=5).json()
        if session["archives"] and session["archives"][0]["status"] == wanted:
            return session
        time.sleep(0.05)
    raise AssertionError(f"archive never reached {wanted}: {session}")


@pytest.mark.slow
def test_sigkill_during_phase2_then_restart_completes_the_archive(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    history = [m for i in range(20) for m in turn(i)]
    server = start_server(db, port, CE_WORKER__FAULT_DELAY_MS="60000", CE_WORKER__LEASE_S="120")
    try:
        assert (
            httpx.post(f"{base}/after-turn", json={"sessionId": "s1", "messages": history}).json()[
                "ingested"
            ]
            == 40
        )
        commit = httpx.post(f"{base}/sessions/s1/commit", json={"keepRecentCount": 4}).json()
        assert commit["status"] == "accepted"
        wait_for_status(base, "running")
        tail = turn(99)
        assert (
            httpx.post(
                f"{base}/after-turn", json={"sessionId": "s1", "messages": history + tail}
            ).json()["ingested"]
            == 2
        )
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=10)

    # The lease (120 s) has not expired: the new process reclaims its predecessor's job at start-up.
    server = start_server(db, port)
    try:
        session = wait_for_status(base, "completed")
        archive = httpx.get(f"{base}/archives/archive_001", params={"sessionId": "s1"}).json()
        assert archive["messageCount"] == 36
        assert [m["message"] for m in archive["messages"]] == history[:36]
        assert archive["overview"].startswith("# Working Memory")
        assert session["messageCount"] == 6
        assert session["totalMessageCount"] == 42
        body = httpx.post(
            f"{base}/assemble",
            json={"sessionId": "s1", "messages": history + tail, "prompt": "next"},
        ).json()
        assert body["messages"][-6:][1:] == history[-3:] + tail
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=20)
