"""Tables for the console and the ``bench-peer`` section of ``bench/RESULTS.md``."""

from __future__ import annotations

import os
import platform
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from bench.common import REPO_ROOT, fmt_ms, summary
from bench.peer.workloads import Measure, Result, SizePoint

START = "<!-- bench-peer:start -->"
END = "<!-- bench-peer:end -->"


def _p(m: Measure) -> tuple[float | None, float | None]:
    if not m.samples_ms:
        return None, None
    p50, p99 = summary(m.samples_ms)
    return p50, (p99 if len(m.samples_ms) >= 5 else None)


def _x(value: float | None) -> str:
    return "-" if value is None else (f"{value:.1f}×" if value < 100 else f"{value:.0f}×")


def _rate(value: float | None) -> str:
    return "-" if value is None else (f"{value:.1f}" if value < 100 else f"{value:.0f}")


def ratios(r: Result) -> tuple[float | None, float | None]:
    """(peer p50 / our p50, our throughput / peer throughput): above 1 means we are faster."""
    ours, _ = _p(r.ours)
    peer, _ = _p(r.peer)
    latency = peer / ours if ours and peer else None
    throughput = None
    if r.throughput and r.ours.throughput and r.peer.throughput:
        throughput = r.ours.throughput / r.peer.throughput
    return latency, throughput


def verdict(r: Result) -> str:
    if r.goal is None:
        return "-"
    latency, throughput = ratios(r)
    figure = throughput if r.throughput else latency
    if figure is None:
        return "-"
    return f"≥{r.goal:g}× {'ok' if figure >= r.goal else 'MISS'}"


HEADERS = [
    "workload",
    "clients",
    "n ours/peer",
    "ours p50",
    "ours p99",
    "peer p50",
    "peer p99",
    "p50 ratio",
    "ours turns/s",
    "peer turns/s",
    "turns/s ratio",
    "goal",
]


def rows(results: list[Result]) -> list[list[str]]:
    out = []
    for r in results:
        o50, o99 = _p(r.ours)
        p50, p99 = _p(r.peer)
        latency, throughput = ratios(r)
        out.append(
            [
                r.workload,
                str(r.clients),
                f"{len(r.ours.samples_ms)}/{len(r.peer.samples_ms)}",
                fmt_ms(o50),
                fmt_ms(o99),
                fmt_ms(p50),
                fmt_ms(p99),
                _x(latency),
                _rate(r.ours.throughput) if r.throughput else "-",
                _rate(r.peer.throughput) if r.throughput else "-",
                _x(throughput),
                verdict(r),
            ]
        )
    return out


def text_table(headers: list[str], cells: list[list[str]], right: set[int]) -> str:
    widths = [
        max(len(h), *(len(c[i]) for c in cells)) if cells else len(h) for i, h in enumerate(headers)
    ]

    def line(values: list[str]) -> str:
        return "  ".join(
            v.rjust(w) if i in right else v.ljust(w)
            for i, (v, w) in enumerate(zip(values, widths, strict=True))
        ).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(c) for c in cells)])


def md_table(headers: list[str], cells: list[list[str]], right: set[int]) -> str:
    align = ["---:" if i in right else "---" for i in range(len(headers))]
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells]
    return "\n".join(lines)


MAIN_RIGHT = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}


@dataclass
class Machine:
    cpus: int
    cpu_model: str
    memory_gb: float
    python: str
    kernel: str
    commit: str
    load_before: str
    load_after: str = ""


def machine() -> Machine:
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = 0.0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = int(line.split()[1]) * 1024 / 1e9
    except OSError:
        pass
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 0
    return Machine(
        cpus=cpus,
        cpu_model=model,
        memory_gb=memory,
        python=platform.python_version(),
        kernel=platform.release(),
        commit=_commit(),
        load_before=load(),
    )


def load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def _commit() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "app"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        return head + (" (app/ has uncommitted changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def series_cells(points: list[SizePoint]) -> list[list[str]]:
    cells = []
    for metric in ("turn", "rebuild", "search"):
        for point in points:
            ours, peer = point.p50[metric]["ours"], point.p50[metric]["peer"]
            cells.append(
                [
                    metric,
                    f"{point.size:,}",
                    fmt_ms(ours),
                    fmt_ms(peer),
                    _x(peer / ours if ours else None),
                ]
            )
    return cells


SERIES_HEADERS = ["metric", "messages", "ours p50", "peer p50", "ratio"]


def rebuild_returns(points: list[SizePoint]) -> list[str]:
    """One line per size: what each side's history rebuild returned there."""
    return [
        f"{point.size:,} messages: "
        + "; ".join(f"{name}: {text}" for name, text in sorted(point.returned.items()))
        for point in points
        if point.returned
    ]


def write_results(path: Path, section: str, start: str = START, end: str = END) -> None:
    """Replace a benchmark's section of ``path`` (between its markers), keeping the rest."""
    block = f"{start}\n{section.rstrip()}\n{end}\n"
    if path.exists():
        text = path.read_text(encoding="utf-8")
        pattern = re.compile(re.escape(start) + r".*?" + re.escape(end) + r"\n?", re.S)
        if pattern.search(text):
            text = pattern.sub(lambda _: block, text, count=1)
        else:
            text = text.rstrip() + "\n\n" + block
    else:
        text = (
            "# Benchmark results\n\nFigures recorded by the benchmarks in this folder (see `bench/README.md`).\n\n"
            + block
        )
    path.write_text(text, encoding="utf-8")
