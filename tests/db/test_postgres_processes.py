"""The scale-out deployment on one PostgreSQL database, as real processes: two API replicas
(``serve`` with CE_WORKER__ENABLED=false) and two Phase 2 workers (``worker``). Eight clients send
fifty turns each, every turn to the other replica than the last; a worker is killed with SIGKILL
while it runs a job. Nothing is lost or duplicated, sequence numbers stay gapless, and every
archive completes: the surviving worker takes the killed one's job when its lease runs out."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import Engine, create_engine, text

from tests.helpers import postgres
from tests.jobs.test_crash_recovery import free_port

ROOT = Path(__file__).resolve().parents[2]
CLIENTS, TURNS, SESSIONS = 8, 50, 4
LEASE_S = 3
JOB_HOLD_MS = 1500  # each Phase 2 job runs this long, so the kill lands while one is running


def environment(url: str, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "CE_DATABASE_URL": url,
        "CE_AUTO_MIGRATE": "false",
        "CE_LOG_LEVEL": "WARNING",
        "CE_WORKER__LEASE_S": str(LEASE_S),
        "CE_WORKER__POLL_INTERVAL_MS": "50",
        "CE_WORKER__FAULT_DELAY_MS": str(JOB_HOLD_MS),
        "CE_EMBEDDING__PROVIDER": "none",
        **extra,
    }


def spawn(url: str, *args: str, **extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "app", *args],
        cwd=ROOT,
        env=environment(url, **extra),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def wait_healthy(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, "the API replica exited"
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError("the API replica did not become ready")


@pytest.fixture
def deployment(server: postgres.PostgresServer) -> Iterator[tuple[str, list[int], list]]:
    url = server.create_database()
    subprocess.run(
        [sys.executable, "-m", "app", "migrate"], cwd=ROOT, env=environment(url), check=True
    )
    ports = [free_port(), free_port()]
    apis = [spawn(url, "serve", CE_PORT=str(p), CE_WORKER__ENABLED="false") for p in ports]
    workers = [spawn(url, "worker"), spawn(url, "worker")]
    try:
        for port, api in zip(ports, apis, strict=True):
            wait_healthy(port, api)
        yield url, ports, workers
    finally:
        for process in apis + workers:
            if process.poll() is None:
                process.terminate()
        for process in apis + workers:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
        server.drop_database(url)


def turn(client: int, index: int) -> list[dict[str, object]]:
    stamp = 1_760_000_000_000 + index * 1000 + client
    return [
        {"role": "user", "content": f"client {client} turn {index} asks", "timestamp": stamp},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": f"client {client} turn {index} answers"}],
            "timestamp": stamp + 1,
        },
    ]


async def send_turns(client: int, ports: list[int]) -> int:
    ingested = 0
    session = f"shared-{client % SESSIONS}"
    async with httpx.AsyncClient(timeout=60) as http:
        for index in range(TURNS):
            port = ports[(client + index) % len(ports)]  # every turn to the other replica
            body = {"sessionId": session, "messages": turn(client, index), "tokenBudget": 600}
            answer = await http.post(f"http://127.0.0.1:{port}/after-turn", json=body)
            assert answer.status_code == 200, answer.text
            ingested += answer.json()["ingested"]
    return ingested


def running_job_of(engine: Engine, pid: int) -> bool:
    with engine.connect() as conn:
        owners = conn.execute(text("SELECT worker_id FROM jobs WHERE status = 'running'"))
        return any(f":{pid}:" in (owner or "") for (owner,) in owners)


async def kill_while_running(engine: Engine, worker: subprocess.Popen[bytes]) -> None:
    async with asyncio.timeout(120):
        while not await asyncio.to_thread(running_job_of, engine, worker.pid):  # noqa: ASYNC110 (polls the database)
            await asyncio.sleep(0.05)
    worker.send_signal(signal.SIGKILL)


def wait_for_phase2(engine: Engine, timeout: float = 120) -> dict[str, int]:
    deadline = time.monotonic() + timeout
    while True:
        with engine.connect() as conn:
            states = dict(
                conn.execute(text("SELECT status, count(*) FROM archives GROUP BY status")).all()
            )
        if set(states) == {"completed"} or time.monotonic() > deadline:
            return {str(k): int(v) for k, v in states.items()}
        time.sleep(0.2)


@pytest.mark.slow
async def test_two_replicas_and_two_workers_lose_nothing_and_survive_a_killed_worker(
    deployment: tuple[str, list[int], list],
) -> None:
    url, ports, workers = deployment
    engine = create_engine(url)
    try:
        killer = asyncio.create_task(kill_while_running(engine, workers[0]))
        sent = await asyncio.gather(*(send_turns(c, ports) for c in range(CLIENTS)))
        await killer
        assert sum(sent) == CLIENTS * TURNS * 2
        with engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT s.session_id, m.seq, m.search_text FROM messages m "
                    "JOIN agent_sessions s ON s.id = m.session_pk ORDER BY s.session_id, m.seq"
                )
            ).all()
        assert len(rows) == CLIENTS * TURNS * 2
        assert len({r.search_text for r in rows}) == len(rows)  # no message stored twice
        for session in {r.session_id for r in rows}:
            seqs = [r.seq for r in rows if r.session_id == session]
            assert seqs == list(range(1, len(seqs) + 1)), f"{session}: gaps or repeats"
        states = wait_for_phase2(engine)
        assert set(states) == {"completed"}, states
        with engine.connect() as conn:
            jobs = conn.execute(text("SELECT status, attempts, worker_id FROM jobs")).all()
        assert {j.status for j in jobs} == {"succeeded"}
        killed = f":{workers[0].pid}:"
        # The job the killed worker held ran again, to completion, on the other worker.
        assert any(j.attempts >= 2 and killed not in j.worker_id for j in jobs), jobs
        assert states["completed"] == len(jobs) > 0
    finally:
        engine.dispose()
