"""POST /after-turn against a real uvicorn server over loopback HTTP.

latency: sessions that already hold a 200-message snapshot; each request sends the host's full
snapshot plus one new turn (4 messages) with ``prePromptMessageCount`` = the previous length.
Requests go round-robin over many sessions so every one sees a snapshot of 200..~216 messages.

throughput: 32 sessions × 50 turns from 8 concurrent client threads (snapshots grow 0 → 200);
afterwards every session must hold exactly the messages sent.
"""

from __future__ import annotations

import threading
import time

import httpx

from bench.common import (
    JSON_HEADERS,
    NO_AUTO_COMMIT_ENV,
    Config,
    Row,
    Server,
    check,
    encode,
    summary,
    temp_dir,
)
from bench.workload import Conversation, Message

SNAPSHOT = 200
NEW_PER_TURN = 4


def _body(session_id: str, snapshot: list[Message], new: list[Message]) -> bytes:
    return encode(
        {
            "sessionId": session_id,
            "messages": snapshot + new,
            "prePromptMessageCount": len(snapshot),
        }
    )


def _post(client: httpx.Client, body: bytes) -> dict:
    return check(client.post("/after-turn", content=body, headers=JSON_HEADERS))


def latency(cfg: Config) -> Row:
    sessions = cfg.pick(100, 15)
    rounds = cfg.pick(4, 3)
    with temp_dir("after-turn") as tmp, Server(tmp, tmp / "bench.db", NO_AUTO_COMMIT_ENV) as server:
        with server.client() as client:
            convs = {f"lat-{i}": Conversation(seed=1000 + i) for i in range(sessions)}
            snapshots: dict[str, list[Message]] = {}
            for sid, conv in convs.items():
                snapshots[sid] = conv.messages(SNAPSHOT)
                _post(client, _body(sid, [], snapshots[sid]))
            warm = Conversation(seed=999)
            warm_snapshot = warm.messages(SNAPSHOT)
            _post(client, _body("lat-warmup", [], warm_snapshot))
            for _ in range(10):
                new = warm.turn()
                _post(client, _body("lat-warmup", warm_snapshot, new))
                warm_snapshot = warm_snapshot + new
            samples: list[float] = []
            bad = 0
            for _ in range(rounds):
                for sid, conv in convs.items():
                    new = conv.turn()
                    body = _body(sid, snapshots[sid], new)
                    started = time.perf_counter()
                    response = client.post("/after-turn", content=body, headers=JSON_HEADERS)
                    samples.append((time.perf_counter() - started) * 1000)
                    result = check(response)
                    if (
                        result["ingested"] != NEW_PER_TURN
                        or result["duplicates"] != 0
                        or result["commit"].get("triggered")
                    ):
                        bad += 1
                    snapshots[sid] = snapshots[sid] + new
    p50, p99 = summary(samples)
    avg_kb = len(body) / 1024
    row = Row(
        name="after-turn",
        workload=f"{SNAPSHOT}-msg snapshot + {NEW_PER_TURN} new, {len(samples)} req, real server",
        p50_ms=p50,
        p99_ms=p99,
        target="p50<=10 p99<=40 ms",
        figure=p50,
        target_value=10,
        p99_target=40,
        samples=len(samples),
    )
    row.notes.append(
        f"p50/10 = {p50 / 10:.2f}, p99/40 = {p99 / 40:.2f} (ratio column = the worse of the two); "
        f"request body ~{avg_kb:.0f} KiB; {bad} responses not exactly {NEW_PER_TURN} ingested / 0 duplicates"
    )
    return row


def throughput(cfg: Config) -> Row:
    sessions = 32
    turns = cfg.pick(50, 10)
    clients = 8
    expected = turns * NEW_PER_TURN
    plans: dict[str, list[bytes]] = {}
    for i in range(sessions):
        sid = f"tp-{i}"
        conv = Conversation(seed=5000 + i)
        snapshot: list[Message] = []
        bodies = []
        for _ in range(turns):
            new = conv.turn()
            bodies.append(_body(sid, snapshot, new))
            snapshot = snapshot + new
        plans[sid] = bodies
    ids = list(plans)
    latencies: list[float] = []
    ingested = [0]
    duplicates = [0]
    errors: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(clients + 1)

    def client_thread(base_url: str, mine: list[str]) -> None:
        local: list[float] = []
        got = dup = 0
        with httpx.Client(base_url=base_url, timeout=120) as client:
            client.get("/healthz")
            start.wait()
            try:
                for turn in range(turns):
                    for sid in mine:
                        started = time.perf_counter()
                        response = client.post(
                            "/after-turn", content=plans[sid][turn], headers=JSON_HEADERS
                        )
                        local.append((time.perf_counter() - started) * 1000)
                        result = check(response)
                        got += result["ingested"]
                        dup += result["duplicates"]
            except Exception as exc:  # noqa: BLE001 - reported in the table
                with lock:
                    errors.append(repr(exc)[:300])
        with lock:
            latencies.extend(local)
            ingested[0] += got
            duplicates[0] += dup

    with temp_dir("throughput") as tmp, Server(tmp, tmp / "bench.db", NO_AUTO_COMMIT_ENV) as server:
        threads = [
            threading.Thread(
                target=client_thread, args=(server.base_url, ids[c::clients]), daemon=True
            )
            for c in range(clients)
        ]
        for t in threads:
            t.start()
        server_cpu0 = server.cpu_seconds()
        client_cpu0 = time.process_time()
        start.wait()
        began = time.perf_counter()
        for t in threads:
            t.join()
        wall = time.perf_counter() - began
        client_cpu = time.process_time() - client_cpu0
        server_cpu1 = server.cpu_seconds()
        server_cpu = (
            None if server_cpu0 is None or server_cpu1 is None else server_cpu1 - server_cpu0
        )
        with server.client() as client:
            totals = {
                sid: check(client.get(f"/sessions/{sid}"))["totalMessageCount"] for sid in ids
            }
    rate = len(latencies) / wall if wall > 0 else 0.0
    exact = sum(1 for n in totals.values() if n == expected)
    stored = sum(totals.values())
    sent = sessions * expected
    p50, p99 = summary(latencies) if latencies else (None, None)
    row = Row(
        name="after-turn throughput",
        workload=f"{sessions} sessions x {turns} turns, {clients} clients",
        p50_ms=p50,
        p99_ms=p99,
        target=">=300 turns/s",
        figure=rate,
        target_value=300,
        higher_is_better=True,
        samples=len(latencies),
        unit="turns/s",
    )
    verdict = "OK" if exact == sessions and stored == sent and not errors else "FAILED"
    cpu = f"server CPU {server_cpu:.1f} s, " if server_cpu is not None else ""
    row.notes.append(
        f"{rate:.0f} turns/s ({len(latencies)} turns in {wall:.2f} s; {cpu}client CPU {client_cpu:.1f} s); "
        "p50/p99 = per-request latency under load"
    )
    row.notes.append(
        f"integrity {verdict}: {exact}/{sessions} sessions hold exactly {expected} messages; "
        f"sent {sent}, stored {stored} (lost {max(0, sent - stored)}, extra {max(0, stored - sent)}); "
        f"responses: {ingested[0]} ingested, {duplicates[0]} duplicates; {len(errors)} client errors"
        + (f" first: {errors[0]}" if errors else "")
    )
    return row


def run_latency(cfg: Config) -> list[Row]:
    return [latency(cfg)]


def run_throughput(cfg: Config) -> list[Row]:
    return [throughput(cfg)]
