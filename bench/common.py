"""Shared pieces: percentiles, result rows, the table, a real server process, temp dirs."""

from __future__ import annotations

import gc
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from app.db.engine import create_db_engine
from app.db.migrate import upgrade_to_head
from app.settings import Settings

REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Config:
    quick: bool = False

    def pick(self, full: int, quick: int) -> int:
        return quick if self.quick else full


@dataclass
class Row:
    """One line of the report.

    ``figure`` is what the target is about (p50 in ms, or a rate); ``ratio`` is figure / target.
    ``higher_is_better`` flips the verdict for throughput rows.
    """

    name: str
    workload: str
    p50_ms: float | None
    p99_ms: float | None
    target: str
    figure: float | None
    target_value: float | None
    higher_is_better: bool = False
    p99_target: float | None = None
    samples: int = 0
    unit: str = "ms"
    notes: list[str] = field(default_factory=list)

    @property
    def ratio(self) -> float | None:
        """figure / target; with a p99 target too, the worse of p50/target and p99/p99_target."""
        if self.figure is None or not self.target_value:
            return None
        ratio = self.figure / self.target_value
        if self.p99_target and self.p99_ms is not None:
            ratio = max(ratio, self.p99_ms / self.p99_target)
        return ratio

    @property
    def verdict(self) -> str:
        ratio = self.ratio
        if ratio is None:
            return "-"
        ok = ratio >= 1 if self.higher_is_better else ratio <= 1
        return "ok" if ok else "MISS"


def percentile(samples: list[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100) of a non-empty sample."""
    data = sorted(samples)
    if len(data) == 1:
        return data[0]
    pos = (len(data) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return data[lo] + (data[hi] - data[lo]) * (pos - lo)


def summary(samples_ms: list[float]) -> tuple[float, float]:
    return percentile(samples_ms, 50), percentile(samples_ms, 99)


def time_calls(fn: Callable[[], object], iterations: int, warmup: int = 0) -> list[float]:
    """Run ``fn`` ``warmup`` + ``iterations`` times; the durations (ms) of the measured calls.

    The garbage collector runs between calls, not inside them, so one unlucky collection of
    earlier garbage does not land in a sample (collections the call itself causes still count).
    """
    for _ in range(warmup):
        fn()
    samples: list[float] = []
    for _ in range(iterations):
        gc.collect()
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def fmt_ms(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _figure(row: Row) -> str:
    if row.figure is None:
        return "-"
    return (
        f"{fmt_ms(row.figure)} {row.unit}" if row.unit == "ms" else f"{row.figure:.0f} {row.unit}"
    )


def print_table(rows: list[Row]) -> None:
    """One line per row; p99 is left out ("-") when there are fewer than 5 samples."""
    headers = ["benchmark", "workload", "n", "p50 ms", "p99 ms", "figure", "target", "ratio", ""]
    cells = [
        [
            r.name,
            r.workload,
            str(r.samples) if r.samples else "-",
            fmt_ms(r.p50_ms),
            fmt_ms(r.p99_ms) if r.samples >= 5 else "-",
            _figure(r),
            r.target,
            "-" if r.ratio is None else f"{r.ratio:.2f}",
            r.verdict,
        ]
        for r in rows
    ]
    widths = [
        max(len(h), *(len(c[i]) for c in cells)) if cells else len(h) for i, h in enumerate(headers)
    ]
    right = {2, 3, 4, 5, 7}

    def line(values: list[str]) -> str:
        return "  ".join(
            v.rjust(w) if i in right else v.ljust(w)
            for i, (v, w) in enumerate(zip(values, widths, strict=True))
        ).rstrip()

    print(line(headers))
    print(line(["-" * w for w in widths]))
    for row in cells:
        print(line(row))
    notes = [(r.name, n) for r in rows for n in r.notes]
    if notes:
        print()
        for name, note in notes:
            print(f"  {name}: {note}")


@contextmanager
def temp_dir(prefix: str) -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix=f"ce-bench-{prefix}-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def migrated_db(path: Path) -> Path:
    """A database file at ``path`` built by the app's migrations."""
    engine = create_db_engine(Settings(database_url=f"sqlite:///{path}"))
    upgrade_to_head(engine)
    engine.dispose()
    return path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# Settings for benchmark servers: no automatic commit, so the measured work stays the same.
NO_AUTO_COMMIT_ENV = {
    "CE_COMMIT__TOKEN_THRESHOLD_RATIO": "1",
    "CE_COMMIT__DEFAULT_TOKEN_BUDGET": str(10**12),
}


class Server:
    """``python -m app serve`` as a subprocess on a free loopback port."""

    def __init__(
        self, workdir: Path, db_path: Path, extra_env: dict[str, str] | None = None
    ) -> None:
        self.workdir = workdir
        self.db_path = db_path
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log_path = workdir / f"server-{self.port}.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith("CE_")}
        env.update(
            {
                "CE_HOST": "127.0.0.1",
                "CE_PORT": str(self.port),
                "CE_DATABASE_URL": f"sqlite:///{db_path}",
                "CE_LOG_LEVEL": "WARNING",
                # Benchmarks measure capacity, not the per-tenant limits.
                "CE_RATE_LIMIT__HOOKS_PER_S": "0",
                "CE_RATE_LIMIT__SEARCH_PER_S": "0",
                **(extra_env or {}),
            }
        )
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None
        self.profiler: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Server:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self, timeout_s: float = 60.0) -> None:
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "app", "serve"],
                cwd=REPO_ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                if httpx.get(f"{self.base_url}/healthz", timeout=1.0).status_code == 200:
                    try:
                        self._start_profiler()
                    except BaseException:
                        self.stop()  # never leave a server behind
                        raise
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"server did not become healthy in {timeout_s}s:\n{self.log_tail()}")

    def _start_profiler(self) -> None:
        """With ``CE_BENCH_PROFILE=<dir>``, py-spy samples the server until it stops; the folded
        stacks land in ``<dir>/server-<port>.folded`` (``python -m bench.profile <file>`` sums them)."""
        folder = os.environ.get("CE_BENCH_PROFILE")
        if not folder or self.proc is None:
            return
        Path(folder).mkdir(parents=True, exist_ok=True)
        out = Path(folder) / f"server-{self.port}.folded"
        # py-spy is installed beside this interpreter (the dev extra), whatever PATH holds.
        self.profiler = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("py-spy")),
                "record",
                "--pid",
                str(self.proc.pid),
                "--format",
                "raw",
                "--rate",
                "250",
                "--nonblocking",
                *(["--gil"] if os.environ.get("CE_BENCH_PROFILE_GIL") else []),
                "--output",
                str(out),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def stop(self) -> None:
        self._stop_server()
        profiler, self.profiler = self.profiler, None
        if profiler is not None:
            profiler.wait(timeout=30)  # py-spy writes its file when the process it samples exits

    def _stop_server(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

    def cpu_seconds(self) -> float | None:
        """User + system CPU time of the server process so far (Linux /proc), else None."""
        if self.proc is None:
            return None
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return None

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def client(self, timeout: float = 60.0) -> httpx.Client:
        return httpx.Client(base_url=self.base_url, timeout=timeout)


def check(response: httpx.Response) -> dict:
    """The JSON body of a 2xx response; raises with the body otherwise."""
    if response.status_code >= 300:
        raise RuntimeError(
            f"{response.request.method} {response.request.url} -> {response.status_code}: {response.text[:500]}"
        )
    return response.json()


JSON_HEADERS = {"content-type": "application/json"}


def encode(body: object) -> bytes:
    """A request body serialised ahead of time, so client-side JSON work stays out of timings."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
