"""`backup` while 8 clients write through the HTTP API: the copy opens, passes the integrity check
and holds every message acknowledged before the backup began."""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path

import httpx
import pysqlite3.dbapi2 as sqlite
import pytest
import sqlite_vec

from tests.commands.cli import cli_env, run_cli
from tests.jobs.test_crash_recovery import free_port, start_server

pytestmark = pytest.mark.slow
CLIENTS = 8


class Writer(threading.Thread):
    """One client committing turns to its own session until told to stop; records what was acked."""

    def __init__(self, base: str, number: int, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.base, self.session, self.stop = base, f"writer-{number}", stop
        self.acked: list[str] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()

    def run(self) -> None:
        with httpx.Client(base_url=self.base, timeout=30) as client:
            turn = 0
            while not self.stop.is_set():
                text = f"{self.session} turn {turn}"
                answer = client.post(
                    "/commit-turn",
                    json={
                        "sessionId": self.session,
                        "advancementKey": f"k{turn}",
                        "messages": [
                            {"role": "user", "content": text, "timestamp": 1_760_000_000_000 + turn}
                        ],
                    },
                )
                if answer.status_code == 200:
                    with self._lock:
                        self.acked.append(text)
                else:
                    self.errors.append(answer.text)
                turn += 1

    def acked_so_far(self) -> list[str]:
        with self._lock:
            return list(self.acked)


def stored_texts(db: Path) -> set[str]:
    conn = sqlite.connect(str(db))
    try:
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        return {
            json.loads(body)["content"] for (body,) in conn.execute("SELECT body FROM messages")
        }
    finally:
        conn.close()


def test_backup_while_eight_clients_write(tmp_path: Path) -> None:
    db, copy = tmp_path / "live.db", tmp_path / "copy.db"
    port = free_port()
    server = start_server(db, port, CE_EMBEDDING__PROVIDER="none")
    stop = threading.Event()
    writers = [Writer(f"http://127.0.0.1:{port}", n, stop) for n in range(CLIENTS)]
    try:
        for writer in writers:
            writer.start()
        time.sleep(1.5)
        before = [text for writer in writers for text in writer.acked_so_far()]
        result = run_cli("backup", str(copy), env=cli_env(db))
        during = sum(len(w.acked_so_far()) for w in writers) - len(before)
        time.sleep(0.3)
    finally:
        stop.set()
        for writer in writers:
            writer.join(timeout=30)
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=20)
    assert result.returncode == 0, result.stderr
    assert "integrity ok" in result.stdout
    assert [e for w in writers for e in w.errors] == []
    assert len(before) >= CLIENTS and during > 0  # the clients really were writing around the copy
    saved = stored_texts(copy)
    assert set(before) <= saved
    assert not (tmp_path / "copy.db.partial").exists()
    assert (
        run_cli("backup", str(copy), env=cli_env(db)).returncode == 1
    )  # never overwrites by accident
