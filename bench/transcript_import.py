"""Transcript import throughput: OpenClaw session files in, stored as the hooks would store them.

    .venv/bin/python -m bench.transcript_import [--quick] [--no-write]

The store is generated in the host's own event format (``tests/helpers/transcripts.py``: turns of
prompt, tool call, tool result and answer, with the host's bookkeeping entries between them), 500
messages a session, in an older host's layout (``agents/main/sessions/<id>.jsonl``). Measured in
process on a fresh SQLite database migrated by the app's migrations, with the defaults the
command uses (256 messages a transaction, synchronous FULL): *read* (parse every file), *import*
(``import_sessions``: fingerprints, the stored-copy check, capture of each batch, the final
archive of each session), then *again* (the same import run a second time: nothing is stored).
Phase 2 (Working Memory, search facts, vectors) is not part of it: the service's worker does that
afterwards. The run writes its section of ``bench/RESULTS.md`` (between its own markers).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from app.db.engine import create_db_engine
from app.db.uow import UnitOfWork
from app.imports.service import ImportOptions, import_sessions
from app.imports.sources import read_path
from app.settings import Settings
from bench.common import REPO_ROOT, migrated_db, temp_dir
from bench.peer.report import load, machine, write_results
from tests.helpers.transcripts import write_sessions

START = "<!-- bench-transcript-import:start -->"
END = "<!-- bench-transcript-import:end -->"
RESULTS = REPO_ROOT / "bench" / "RESULTS.md"
PER_SESSION = 500


@dataclass(frozen=True)
class Point:
    messages: int
    sessions: int
    read_s: float
    import_s: float
    again_s: float
    stored: int
    archives: int

    def rate(self, seconds: float) -> float:
        return self.messages / seconds if seconds > 0 else 0.0


def measure(messages: int, folder: Path) -> Point:
    sessions = messages // PER_SESSION
    write_sessions(folder / "store", sessions, PER_SESSION)
    db = migrated_db(folder / "bench.db")
    settings = Settings(database_url=f"sqlite:///{db}", embedding={"provider": "none"})
    engine = create_db_engine(settings)
    try:
        uow = UnitOfWork(engine)
        started = time.perf_counter()
        read = read_path("openclaw", folder / "store")
        read_s = time.perf_counter() - started
        options = ImportOptions("default")
        started = time.perf_counter()
        first = import_sessions(uow, settings, read, options)
        import_s = time.perf_counter() - started
        started = time.perf_counter()
        again = import_sessions(uow, settings, read_path("openclaw", folder / "store"), options)
        again_s = time.perf_counter() - started
    finally:
        engine.dispose()
    assert first.messages == messages and again.messages == 0, (first, again)
    return Point(messages, sessions, read_s, import_s, again_s, first.messages, first.archives)


def markdown(points: list[Point], load_before: str) -> str:
    host = machine()
    day = datetime.now(UTC).date().isoformat()
    lines = [
        "## Transcript import (`python -m bench.transcript_import`)",
        "",
        f"{day}, commit {host.commit}: {host.cpus} × {host.cpu_model}, {host.memory_gb:.0f} GB, "
        f"Python {host.python}; SQLite, synchronous FULL. Load average before {load_before}, "
        f"after {load()}. OpenClaw session files of {PER_SESSION} messages (user, tool call, "
        "tool result, answer, and a bookkeeping entry a turn), 256 messages a transaction; "
        "Phase 2 not included (bench/transcript_import.py says what is timed).",
        "",
        "| messages | sessions | read s | import s | import messages/s | read + import messages/s "
        "| again (nothing stored) messages/s | archives |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for p in points:
        lines.append(
            f"| {p.messages:,} | {p.sessions} | {p.read_s:.2f} | {p.import_s:.2f} "
            f"| {p.rate(p.import_s):,.0f} | {p.rate(p.read_s + p.import_s):,.0f} "
            f"| {p.rate(p.again_s):,.0f} | {p.archives} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="10,000 messages only")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    load_before = load()
    points = []
    for size in (10_000,) if args.quick else (10_000, 50_000):
        with temp_dir("import") as folder:
            points.append(measure(size, folder))
            print(points[-1], flush=True)
    section = markdown(points, load_before)
    print(section)
    if not args.no_write:
        write_results(RESULTS, section, START, END)
        print(f"\n  written to {RESULTS.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
