"""POST /assemble (pre_prompt) against a real uvicorn server over loopback HTTP.

The session is built through the API the way a host would: after-turns of growing snapshots,
interleaved with five ``/sessions/{id}/commit`` calls (``keepRecentCount``, ``wait: true``, so the
Phase 2 worker completes each archive), until it holds 2,000 messages in 5 archives plus a live
window. Each measured request then sends a prompt, a 128k budget and the host's transcript as the
plugin sends it (its newest 64 messages with ``omittedMessageCount``), or whole, as a client that
does not trim it would.
"""

from __future__ import annotations

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

TOTAL = 2000
ARCHIVES = 5
PER_ARCHIVE = 300  # messages added before each commit
KEEP = 20
BUDGET = 128000
PLUGIN_TAIL = 64  # the plugin's default assembleTailMessages
BATCH = 100  # messages per after-turn while building


def _after_turn(
    client: httpx.Client, sid: str, snapshot: list[Message], new: list[Message]
) -> None:
    body = {"sessionId": sid, "messages": snapshot + new, "prePromptMessageCount": len(snapshot)}
    result = check(client.post("/after-turn", content=encode(body), headers=JSON_HEADERS))
    if result["ingested"] != len(new):
        raise RuntimeError(f"after-turn stored {result['ingested']} of {len(new)} messages")


def build_session(client: httpx.Client, sid: str, conv: Conversation) -> list[Message]:
    """2,000 stored messages, 5 completed archives; returns the host's transcript."""
    snapshot: list[Message] = []
    for archive in range(ARCHIVES + 1):
        target = (archive + 1) * PER_ARCHIVE if archive < ARCHIVES else TOTAL
        while len(snapshot) < target:
            new = conv.messages(min(BATCH, target - len(snapshot)))
            _after_turn(client, sid, snapshot, new)
            snapshot = snapshot + new
        if archive < ARCHIVES:
            result = check(
                client.post(f"/sessions/{sid}/commit", json={"keepRecentCount": KEEP, "wait": True})
            )
            status = (result.get("archive") or {}).get("status")
            if result["status"] != "accepted" or status != "completed":
                raise RuntimeError(f"commit {archive + 1} did not complete: {result}")
    return snapshot


def run(cfg: Config) -> list[Row]:
    iterations = cfg.pick(200, 20)
    with temp_dir("assemble") as tmp, Server(tmp, tmp / "bench.db", NO_AUTO_COMMIT_ENV) as server:
        with server.client() as client:
            sid = "assemble-1"
            built = time.perf_counter()
            transcript = build_session(client, sid, Conversation(seed=42))
            build_s = time.perf_counter() - built
            view = check(client.get(f"/sessions/{sid}"))
            completed = sum(1 for a in view["archives"] if a["status"] == "completed")
            if view["totalMessageCount"] != TOTAL or completed != ARCHIVES:
                raise RuntimeError(
                    f"session not as planned: {view['totalMessageCount']} messages, {completed} completed archives"
                )
            prompt = "Why does the worker retry forever when the upstream returns 429? Check src/jobs/tasks.py."
            omitted = len(transcript) - PLUGIN_TAIL
            plugin = encode(
                {
                    "sessionId": sid,
                    "messages": transcript[omitted:],
                    "omittedMessageCount": omitted,
                    "tokenBudget": BUDGET,
                    "prompt": prompt,
                }
            )
            whole = encode(
                {"sessionId": sid, "messages": transcript, "tokenBudget": BUDGET, "prompt": prompt}
            )
            rows = []
            last: dict = {}
            sent = (
                (f"the plugin sends the newest {PLUGIN_TAIL}", plugin),
                ("a client sends all 2,000", whole),
            )
            for label, body in sent:
                for _ in range(5):
                    check(client.post("/assemble", content=body, headers=JSON_HEADERS))
                samples: list[float] = []
                server_ms: list[float] = []
                for _ in range(iterations):
                    started = time.perf_counter()
                    response = client.post("/assemble", content=body, headers=JSON_HEADERS)
                    samples.append((time.perf_counter() - started) * 1000)
                    last = check(response)
                    server_ms.append(float(last["diagnostics"].get("durationMs", 0)))
                diag = last["diagnostics"]
                if diag.get("mode") != "assembled":
                    raise RuntimeError(f"assemble did not assemble: {diag}")
                p50, p99 = summary(samples)
                row = Row(
                    name="assemble pre_prompt" + ("" if body is plugin else " (whole)"),
                    workload=f"2,000 stored, 5 archives, 128k; {label}",
                    p50_ms=p50,
                    p99_ms=p99,
                    target="p50<=15 ms",
                    figure=p50,
                    target_value=15,
                    samples=len(samples),
                )
                msgs = diag["messages"]
                row.notes.append(
                    f"{iterations} req, body {len(body) / 1024:.0f} KiB; returned {msgs['returned']} messages "
                    f"(stored {msgs['stored']}, reconciled {msgs['reconciled']}, dropped {msgs['dropped']}), "
                    f"~{last['estimatedTokens']} tokens, overview included: {diag['archives'].get('overviewIncluded')}, "
                    f"in-handler durationMs p50 {summary(server_ms)[0]:.1f} (the rest is HTTP, JSON parsing and validation)"
                )
                rows.append(row)
            rows[0].notes.append(f"session built through the API in {build_s:.1f} s")
    return rows
