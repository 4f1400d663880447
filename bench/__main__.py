"""Run the benchmarks and print one table: ``python -m bench [--only NAME ...] [--quick]``."""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import traceback
from collections.abc import Callable

from bench import (
    adversarial,
    after_turn,
    archive_recall,
    assemble,
    commit,
    context,
    embeddings,
    long_session,
    memory_search,
    recall,
    retrieval,
    retrieval_eval,
    search,
    working_memory,
)
from bench.common import Config, Row, print_table

Part = Callable[[Config], list[Row]]

# name → its parts; a part that crashes becomes a FAILED row and the others still run.
BENCHMARKS: dict[str, list[tuple[str, Part]]] = {
    "after-turn": [
        ("after-turn", after_turn.run_latency),
        ("after-turn throughput", after_turn.run_throughput),
    ],
    "assemble": [("assemble pre_prompt", assemble.run)],
    "commit": [("commit phase 1", commit.run)],
    "working-memory": [("working memory (extractive)", working_memory.run)],
    "search": [("archive search", search.run)],
    "long-session": [("long session", long_session.run)],
    "embeddings": [("embeddings (local model)", embeddings.run)],
    "memory-search": [("memory search", memory_search.run)],
    "recall": [("assemble tool_loop recall", recall.run)],
    "archive-recall": [("assemble tool_loop archive recall", archive_recall.run)],
    "retrieval-eval": [("retrieval quality", retrieval_eval.run)],
    "retrieval": [("conversation retrieval", retrieval.run)],
    "context": [("context holds the answer", context.run)],
    "adversarial": [
        ("adversarial redaction", adversarial.run_redaction),
        ("adversarial requests", adversarial.run_requests),
    ],
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "--only",
        action="append",
        choices=sorted(BENCHMARKS),
        metavar="NAME",
        help=f"run only this benchmark (repeatable): {', '.join(BENCHMARKS)}",
    )
    parser.add_argument(
        "names",
        nargs="*",
        choices=[[], *sorted(BENCHMARKS)],
        metavar="NAME",
        help="benchmarks to run (the same as --only NAME)",
    )
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer iterations")
    args = parser.parse_args(argv)
    cfg = Config(quick=args.quick)
    chosen = [*(args.only or []), *args.names]
    names = list(dict.fromkeys(chosen)) if chosen else list(BENCHMARKS)
    print(
        f"context-engine benchmarks ({'quick' if cfg.quick else 'full'}): python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, {platform.platform()}",
        flush=True,
    )
    rows: list[Row] = []
    failed: list[str] = []
    began = time.perf_counter()
    for name in names:
        started = time.perf_counter()
        print(f"running {name} ...", flush=True)
        for label, part in BENCHMARKS[name]:
            try:
                rows.extend(part(cfg))
            except Exception:  # noqa: BLE001 - one broken benchmark must not hide the others
                failed.append(label)
                traceback.print_exc()
                rows.append(
                    Row(
                        name=label,
                        workload="FAILED (traceback above)",
                        p50_ms=None,
                        p99_ms=None,
                        target="-",
                        figure=None,
                        target_value=None,
                    )
                )
        print(f"  {name} done in {time.perf_counter() - started:.1f} s", flush=True)
    print()
    print_table(rows)
    print(
        f"\ntotal {time.perf_counter() - began:.0f} s; ratio = figure / target "
        "(latency: <= 1 meets the target; throughput: >= 1 meets it)"
    )
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
