"""A long session with a Working Memory per archive: what grows with the number of archives.

One session grows through the API as a host that commits makes it grow: each 1,000 messages (one
``/commit-turn``) are followed by a commit keeping 20 (``wait: true``: the Phase 2 worker writes
each archive's extractive Working Memory, which grows to its ~12,000-token cap). At 1k, 10k and
100k messages (1k and 10k with ``--quick``) three requests are timed over HTTP:

- the pre-prompt rebuild as the plugin sends it (the newest 64 of the host's last 200 messages,
  with ``omittedMessageCount``);
- keyword search for a word in about one message in seven, and in every Working Memory;
- ranked search for two such words (lexical only: the server runs without an embedder, so that
  building stays fast; ``bench/retrieval_latency.py`` measures the vector side at 100,000).

Each archive's overview is a Working Memory of up to ~50 KB, and every request reads something of
every archive: the rows show how their cost grows from the smallest size to the largest.
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

CHUNK = 1000
KEEP = 20
PLUGIN_TAIL = 64
HOST_TAIL = 200
BUDGET = 128000
PROMPT = "Why does the worker retry forever when the upstream returns 429? Check src/jobs/tasks.py."
KEYWORD = "flaky"
RANKED = "flaky integration test"
SID = "long-1"
# quality.md: pre-prompt assemble p50 ≤ 15 ms; keyword archive search p50 ≤ 50 ms at 100,000.
TARGETS = {"rebuild": 15.0, "keyword": 50.0, "ranked": None}


def _grow(client: httpx.Client, conv: Conversation, turn: int) -> list[Message]:
    """1,000 more messages, then a commit that archives all but 20 and waits for Phase 2."""
    messages = conv.messages(CHUNK)
    body = {"sessionId": SID, "advancementKey": f"grow-{turn}", "messages": messages}
    stored = check(client.post("/commit-turn", content=encode(body), headers=JSON_HEADERS))
    if stored.get("ingested") != CHUNK:
        raise RuntimeError(f"commit-turn stored {stored.get('ingested')} of {CHUNK}")
    result = check(
        client.post(f"/sessions/{SID}/commit", json={"keepRecentCount": KEEP, "wait": True})
    )
    if (result.get("archive") or {}).get("status") != "completed":
        raise RuntimeError(f"commit {turn} did not complete: {result}")
    return messages


def _requests(transcript: list[Message]) -> dict[str, bytes]:
    omitted = len(transcript) - PLUGIN_TAIL
    rebuild = {
        "sessionId": SID,
        "messages": transcript[omitted:],
        "omittedMessageCount": omitted,
        "tokenBudget": BUDGET,
        "prompt": PROMPT,
        "phase": "pre_prompt",
    }
    return {
        "rebuild": encode(rebuild),
        "keyword": encode({"sessionId": SID, "query": KEYWORD, "mode": "keyword", "limit": 20}),
        "ranked": encode({"sessionId": SID, "query": RANKED, "mode": "ranked", "limit": 20}),
    }


def _measure(client: httpx.Client, transcript: list[Message], iterations: int) -> dict:
    """p50/p99 of each request at the session's current size, and what the last answers held."""
    paths = {"rebuild": "/assemble", "keyword": "/archives/search", "ranked": "/archives/search"}
    figures: dict[str, dict] = {}
    for name, body in _requests(transcript).items():
        for _ in range(3):
            check(client.post(paths[name], content=body, headers=JSON_HEADERS))
        samples: list[float] = []
        for _ in range(iterations):
            started = time.perf_counter()
            response = client.post(paths[name], content=body, headers=JSON_HEADERS)
            samples.append((time.perf_counter() - started) * 1000)
        last = check(response)
        if name == "rebuild":
            archives = last["diagnostics"]["archives"]
            held = f"{len(last['messages'])} messages, ~{last['estimatedTokens']} tokens, {archives['completed']} archives"
            if not archives.get("overviewIncluded"):
                raise RuntimeError(f"the rebuild left the Working Memory out: {archives}")
        else:
            held = f"{last['count']} hits, {len(last['overviews'])} overviews"
            if last["count"] == 0:
                raise RuntimeError(f"{name} search found nothing: {last}")
        p50, p99 = summary(samples)
        figures[name] = {"p50": p50, "p99": p99, "n": len(samples), "held": held}
    return figures


def run(cfg: Config) -> list[Row]:
    sizes = [1000, 10000, 100000] if not cfg.quick else [1000, 10000]
    iterations = cfg.pick(40, 10)
    env = {**NO_AUTO_COMMIT_ENV, "CE_EMBEDDING__PROVIDER": "none"}
    points: dict[int, dict] = {}
    with temp_dir("long-session") as tmp, Server(tmp, tmp / "bench.db", env) as server:
        with server.client() as client:
            conv = Conversation(seed=77, prefix="l")
            host: list[Message] = []
            built = time.perf_counter()
            for turn in range(1, max(sizes) // CHUNK + 1):
                host = (host + _grow(client, conv, turn))[-HOST_TAIL:]
                if turn * CHUNK in sizes:
                    points[turn * CHUNK] = _measure(client, host, iterations)
            build_s = time.perf_counter() - built
    return _rows(points, sizes, build_s)


def _rows(points: dict[int, dict], sizes: list[int], build_s: float) -> list[Row]:
    largest, smallest = sizes[-1], sizes[0]
    labels = {
        "rebuild": "long session: pre-prompt rebuild",
        "keyword": f"long session: keyword search {KEYWORD!r}",
        "ranked": f"long session: ranked search {RANKED!r} (lexical)",
    }
    rows = []
    for name, label in labels.items():
        top = points[largest][name]
        target = TARGETS[name]
        row = Row(
            name=label,
            workload=f"{largest:,} messages, {largest // CHUNK} archives with Working Memories",
            p50_ms=top["p50"],
            p99_ms=top["p99"],
            target=f"p50<={target:g} ms" if target else "(growth)",
            figure=top["p50"],
            target_value=target,
            samples=top["n"],
        )
        growth = " → ".join(f"{size:,}: {points[size][name]['p50']:.1f}" for size in sizes)
        ratio = top["p50"] / points[smallest][name]["p50"]
        row.notes.append(
            f"p50 ms by size: {growth} ({ratio:.1f}× from {smallest:,}); {top['held']}"
        )
        rows.append(row)
    rows[0].notes.append(
        f"session grown through the API to {largest:,} messages in {build_s:.0f} s"
    )
    return rows
