"""Adversarial input (issue: no request can stall the service).

- *redaction*: ``redact_secrets`` and capture sanitation over 1 MB of each shape of
  ``bench/adversarial_texts.py``, in process, best of 3.
- *requests*: a real server; 1 MB of each shape as a tool result through ``/after-turn`` and
  100 KB (the content limit) through ``POST /memories`` and 4,000 characters (the query limit)
  through ``POST /memories/search``, one at a time, while a second client keeps
  sending a small ``/after-turn`` to another session. Figures: the slowest adversarial request
  (target 1 s) and the slowest concurrent request that overlapped one (target 100 ms).
"""

from __future__ import annotations

import statistics
import threading
import time
from dataclasses import dataclass, field

import httpx

from app.core.rules.redaction import redact_secrets
from app.core.rules.sanitize import sanitize_text
from bench.adversarial_texts import SHAPES, adversarial_text
from bench.common import Config, Row, Server, encode, migrated_db, percentile, temp_dir

MB = 1_000_000
MEMORY_CONTENT_LIMIT = 100_000
QUERY_LIMIT = 4_000  # the longest memory search query
PROBE_PAUSE_S = 0.01


def _best_of(runs: int, work: object) -> float:
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        work()  # type: ignore[operator]
        timings.append((time.perf_counter() - started) * 1000)
    return min(timings)


def run_redaction(cfg: Config) -> list[Row]:
    """Redaction and sanitation of 1 MB of every shape, in process."""
    size = MB if not cfg.quick else MB // 4
    redaction: dict[str, float] = {}
    sanitation: dict[str, float] = {}
    for name in SHAPES:
        text = adversarial_text(name, size)
        redaction[name] = _best_of(3, lambda t=text: redact_secrets(t))
        # "```json" first makes every sanitation rule run, not only the cheap pre-check.
        sanitation[name] = _best_of(
            3, lambda t=text: sanitize_text("```json " + t, collapse_whitespace=False)
        )
    rows = []
    for label, figures in (("redaction", redaction), ("capture sanitation", sanitation)):
        worst = max(figures, key=figures.__getitem__)
        row = Row(
            name=f"{label} {size // 1000} KB",
            workload=f"{len(figures)} adversarial shapes, worst: {worst}",
            p50_ms=statistics.median(figures.values()),
            p99_ms=None,
            target="≤ 1000 ms (whole request)",
            figure=figures[worst],
            target_value=1000.0,
            samples=len(figures),
        )
        row.notes.append("per shape (ms): " + ", ".join(f"{k} {v:.0f}" for k, v in figures.items()))
        rows.append(row)
    return rows


@dataclass
class _Probe:
    """A client that keeps sending a small /after-turn to its own session."""

    client: httpx.Client
    samples: list[tuple[float, float]] = field(default_factory=list)  # (start, end) monotonic
    stop: threading.Event = field(default_factory=threading.Event)
    turn: int = 0

    def run(self) -> None:
        while not self.stop.is_set():
            self.turn += 1
            body = encode(
                {
                    "sessionId": "probe",
                    "messages": [
                        {"role": "user", "content": f"probe {self.turn}", "timestamp": self.turn}
                    ],
                }
            )
            started = time.monotonic()
            response = self.client.post(
                "/after-turn", content=body, headers={"content-type": "application/json"}
            )
            ended = time.monotonic()
            if response.status_code == 200:
                self.samples.append((started, ended))
            time.sleep(PROBE_PAUSE_S)

    def overlapping(self, start: float, end: float) -> list[float]:
        """Latencies (ms) of the probes that overlapped [start, end]."""
        return [(e - s) * 1000 for s, e in self.samples if s < end and e > start]


def _adversarial_calls(
    size: int, memory_size: int, with_hooks: bool
) -> list[tuple[str, str, bytes]]:
    calls = []
    for index, name in enumerate(SHAPES):
        if with_hooks:
            result = {
                "role": "toolResult",
                "toolCallId": f"t{index}",
                "toolName": "exec",
                "content": [{"type": "text", "text": adversarial_text(name, size)}],
                "timestamp": index,
            }
            calls.append(
                (
                    f"after-turn {name}",
                    "/after-turn",
                    encode({"sessionId": f"adv-{index}", "messages": [result]}),
                )
            )
        memory = {"content": adversarial_text(name, memory_size), "category": "events"}
        calls.append((f"memories {name}", "/memories", encode(memory)))
        query = {"query": adversarial_text(name, QUERY_LIMIT), "limit": 10}
        calls.append((f"search {name}", "/memories/search", encode(query)))
    return calls


def _measure(
    calls: list[tuple[str, str, bytes]], extra_env: dict[str, str] | None = None
) -> tuple[dict[str, float], dict[str, float], _Probe]:
    """Each call on a fresh server, one at a time, with the probe running beside it."""
    with temp_dir("adversarial") as tmp:
        db = migrated_db(tmp / "bench.db")
        with Server(tmp, db, extra_env) as server, server.client() as big, server.client() as small:
            probe = _Probe(small)
            thread = threading.Thread(target=probe.run, daemon=True)
            thread.start()
            time.sleep(0.5)  # the probe's session exists and its client is warm
            latencies: dict[str, float] = {}
            overlapped: dict[str, float] = {}
            try:
                for label, path, body in calls:
                    started = time.monotonic()
                    response = big.post(
                        path, content=body, headers={"content-type": "application/json"}
                    )
                    ended = time.monotonic()
                    if response.status_code != 200:
                        raise RuntimeError(f"{label}: {response.status_code} {response.text[:300]}")
                    latencies[label] = (ended - started) * 1000
                    time.sleep(0.05)  # let the probes that overlapped finish
                    overlapped[label] = max(probe.overlapping(started, ended), default=0.0)
            finally:
                probe.stop.set()
                thread.join(timeout=10)
    return latencies, overlapped, probe


def run_requests(cfg: Config) -> list[Row]:
    size = MB if not cfg.quick else MB // 4
    latencies, overlapped, probe = _measure(
        _adversarial_calls(size, MEMORY_CONTENT_LIMIT, with_hooks=True)
    )
    rows = _request_rows("after-turn", f"{size // 1000} KB tool result", latencies, overlapped)
    rows += _request_rows(
        "memories",
        f"{MEMORY_CONTENT_LIMIT // 1000} KB content, local embedding model",
        latencies,
        overlapped,
    )
    _probe_note(rows[-1], probe)
    rows += _request_rows(
        "search",
        f"{QUERY_LIMIT // 1000},000-character query, local embedding model",
        latencies,
        overlapped,
    )
    plain, plain_overlapped, plain_probe = _measure(
        _adversarial_calls(size, MEMORY_CONTENT_LIMIT, with_hooks=False),
        {"CE_EMBEDDING__PROVIDER": "none"},
    )
    rows += _request_rows(
        "memories",
        f"{MEMORY_CONTENT_LIMIT // 1000} KB content, no embedding",
        plain,
        plain_overlapped,
        suffix=" (no embedding)",
    )
    _probe_note(rows[-1], plain_probe)
    return rows


def _request_rows(
    prefix: str,
    what: str,
    latencies: dict[str, float],
    overlapped: dict[str, float],
    suffix: str = "",
) -> list[Row]:
    mine = {k.split(" ", 1)[1]: v for k, v in latencies.items() if k.startswith(prefix)}
    during = {k.split(" ", 1)[1]: v for k, v in overlapped.items() if k.startswith(prefix)}
    worst = max(mine, key=mine.__getitem__)
    row = Row(
        name=f"adversarial {prefix}{suffix}",
        workload=f"{what}, {len(mine)} shapes, worst: {worst}",
        p50_ms=statistics.median(mine.values()),
        p99_ms=None,
        target="≤ 1000 ms",
        figure=mine[worst],
        target_value=1000.0,
        samples=len(mine),
    )
    row.notes.append("per shape (ms): " + ", ".join(f"{k} {v:.0f}" for k, v in mine.items()))
    worst_probe = max(during, key=during.__getitem__)
    probe_row = Row(
        name=f"concurrent during {prefix}{suffix}",
        workload="small /after-turn to another session",
        p50_ms=statistics.median(during.values()),
        p99_ms=None,
        target="≤ 100 ms",
        figure=during[worst_probe],
        target_value=100.0,
        samples=len(during),
    )
    probe_row.notes.append(
        "slowest overlapping request per shape (ms): "
        + ", ".join(f"{k} {v:.0f}" for k, v in during.items())
    )
    return [row, probe_row]


def _probe_note(row: Row, probe: _Probe) -> None:
    every = [(e - s) * 1000 for s, e in probe.samples]
    if every:
        row.notes.append(
            f"every concurrent request of the run ({len(every)}): p50 {percentile(every, 50):.1f} ms, "
            f"p99 {percentile(every, 99):.1f} ms"
        )
