"""Record ``tests/fixtures/openclaw-2026.9`` again from the real host (a few minutes):

    .venv/bin/python -m tests.helpers.record_host_store

Drives the real OpenClaw host with the plugin against a fresh service (the host test's harness,
``tests/host/``): a first turn with ``--local``, then the gateway for a real ``read`` tool call, an
answer cut inside an emoji, a plain turn and a prompt long enough for the host to store it
zstd-compressed. Then it keeps the host's agent database less the tables no transcript reader
needs, with the run's folder written as ``/home/demo/.openclaw-fixture``, and the messages the
live hooks stored (``live-stored.json``).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pysqlite3.dbapi2 as sqlite

from tests.helpers.host_store import AGENT_DB, FIXTURE
from tests.host.harness import Host, RecordingProxy, Service
from tests.host.install import ensure_installed, openclaw_entry
from tests.host.stub_model import StubModel

KEY = "agent:main:import-fixture"
SHOWN_AS = "/home/demo/.openclaw-fixture"
KEEP = {"schema_meta", "session_windows", "transcript_events", "session_transcript_cold_archives"}
NOTES = "The secret launch code is PELICAN-42. Ship v2 on Friday.\n"


def prompts(notes: Path) -> list[tuple[str, bool]]:
    item = "the billing service now retries refunds with exponential backoff and logs each attempt."
    long = " ".join(f"Item {i}: {item}" for i in range(30))
    return [
        ("Hello, my name is Ada. Remember the word ZEBRA.", True),
        (f"Please READFILE {notes} and tell me the launch code.", False),
        ("PLAIN-3 CUT-EMOJI: what is two plus two?", False),
        ("PLAIN-4: After a long shift I relax with pottery, it clears my head.", False),
        (f"PLAIN-5: here are my release notes, keep them in mind. {long}", False),
    ]


def record(root: Path) -> None:
    service = Service(root / "service")
    service.workdir.mkdir(parents=True)
    stub = StubModel()
    model_url = stub.start()
    service.start()
    proxy = RecordingProxy(service.port)
    proxy.start()
    host = Host(ensure_installed(), openclaw_entry(), root / "openclaw", model_url, proxy.url)
    notes = host.workspace / "notes.md"
    notes.write_text(NOTES)
    try:
        for index, (prompt, local) in enumerate(prompts(notes)):
            if index == 1:
                host.start_gateway()
            result = host.agent_turn(KEY, prompt, local=local, timeout=240)
            if result.returncode != 0:
                raise RuntimeError(result.stderr[-2000:])
    finally:
        host.stop_gateway()
        proxy.stop()
        stub.stop()
        service.stop()
    _keep_store(root / "openclaw", host.state / "agents" / "main" / "agent" / AGENT_DB.name)
    _keep_live(root / "openclaw", root / "service" / "context-engine.db")


def _keep_store(run: Path, source: Path) -> None:
    AGENT_DB.parent.mkdir(parents=True, exist_ok=True)
    AGENT_DB.unlink(missing_ok=True)
    # The host's CHECK constraints use SQL functions newer than some stock sqlite3 builds.
    src, dst = sqlite.connect(f"{source.as_uri()}?mode=ro", uri=True), sqlite.connect(AGENT_DB)
    src.backup(dst)
    src.close()
    dst.execute("PRAGMA foreign_keys = OFF")
    tables = dst.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    for (name,) in tables:
        if name not in KEEP and not name.startswith("sqlite_"):
            dst.execute(f'DROP TABLE IF EXISTS "{name}"')
    dst.execute(
        "UPDATE transcript_events SET event_json = replace(event_json, ?, ?)",
        (str(run), SHOWN_AS),
    )
    dst.commit()
    dst.execute("PRAGMA journal_mode = DELETE")
    dst.execute("VACUUM")
    dst.close()


def _keep_live(run: Path, service_db: Path) -> None:
    db = sqlite3.connect(service_db)
    rows = db.execute(
        "SELECT s.session_id, s.session_key, m.seq, m.role, m.body, m.created_at FROM messages m "
        "JOIN agent_sessions s ON s.id = m.session_pk ORDER BY s.id, m.seq"
    ).fetchall()
    db.close()
    live = [
        {
            "sessionId": sid,
            "sessionKey": key,
            "seq": seq,
            "role": role,
            "message": json.loads(body.replace(str(run), SHOWN_AS)),
            "storedAt": stored_at,
        }
        for sid, key, seq, role, body, stored_at in rows
    ]
    text = json.dumps(live, indent=1, ensure_ascii=False) + "\n"
    (FIXTURE / "live-stored.json").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    folder = Path(tempfile.mkdtemp(prefix="ce-host-store-"))
    try:
        record(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
