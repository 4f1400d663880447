"""The local engine's OpenMP threads: how many, and how long they spin at a barrier.

GNU OpenMP reads its settings once, when the engine's library loads, so they are set just before
the model is created (app/providers/embeddings.py); a setting already in the environment wins.

- **Threads: half the cores the process may run on, at least one.** The engine's threads meet at
  every layer of the model; one of them that the scheduler takes off its core (a request handler,
  Phase 2, another process wants it) makes the others wait, and a query then takes many times as
  long as alone. With half the cores the request handlers keep the other half: on two cores a
  query's embedding runs on one while the search's word side runs on the other
  (app/sessions/archived.py), and nothing else slows it (bench/RESULTS.md, Measurements behind
  the code).
- **Spinning: brief.** Without a setting GNU OpenMP spins 300,000 times before a waiting thread
  sleeps, between calls too, taking a core the request handlers need; told to be passive, its
  threads sleep at every barrier. A short spin meets the other threads at a barrier and then
  sleeps.
"""

from __future__ import annotations

import os

# Spins before a waiting engine thread sleeps (GOMP_SPINCOUNT).
OPENMP_SPINS = 300


def engine_threads(cores: int) -> int:
    """The engine's threads for a process that may run on ``cores`` cores."""
    return max(1, cores // 2)


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
