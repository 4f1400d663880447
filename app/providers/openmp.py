"""The local engine's OpenMP threads: how many, and how long they spin at a barrier.

GNU OpenMP reads its settings once, when the engine's library loads, so they are set just before
the model is created (app/providers/embeddings.py); a setting already in the environment wins.

The engine's threads meet at every layer of the model: a thread that the scheduler takes off its
core (a request handler, Phase 2, another process wants it) makes the others wait, the longer
the more they spin (bench/RESULTS.md, Measurements behind the code). So:

- **Threads: two, or half the cores of a bigger machine.** Two cores embed a query in about half
  the time one does; on a bigger machine the other half stays with the request handlers, so that
  a busy handler seldom takes an engine thread's core. The service embeds a prompt's query
  before it searches, not beside it (app/sessions/recall.py).
- **Spinning: brief.** Without a setting GNU OpenMP spins 300,000 times before a waiting thread
  sleeps, between calls too, taking a core the request handlers need, and a thread that waits
  for a descheduled one spins its time away; told to be passive, its threads sleep at every
  barrier and wake too late. A short spin meets a running thread and then sleeps.

A machine shared with other busy work holds up better with ``OMP_NUM_THREADS=1``.
"""

from __future__ import annotations

import os

# Spins before a waiting engine thread sleeps (GOMP_SPINCOUNT).
OPENMP_SPINS = 1_000


def engine_threads(cores: int) -> int:
    """The engine's threads for a process that may run on ``cores`` cores."""
    return max(1, min(cores, max(2, cores // 2)))


def configure_openmp() -> None:
    """Set the engine's OpenMP threads and spinning unless the environment already does."""
    if "OMP_NUM_THREADS" not in os.environ:
        os.environ["OMP_NUM_THREADS"] = str(engine_threads(_usable_cores()))
    if "OMP_WAIT_POLICY" not in os.environ:
        os.environ.setdefault("GOMP_SPINCOUNT", str(OPENMP_SPINS))


def _usable_cores() -> int:
    """The cores this process may run on (a container's CPU set), else the machine's."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1
