"""The local engine's OpenMP threads: how long they spin at a barrier before they sleep.

Read by GNU OpenMP once, when the engine's library loads, so it is set just before the model is
created (app/providers/embeddings.py).
"""

from __future__ import annotations

import os

# The spins an engine thread makes at one of the model's barriers before it sleeps: long enough to
# meet the other thread at the next barrier (a query's embedding crosses hundreds), short enough
# that it does not spin between calls and take the CPU the request handlers need
# (bench/RESULTS.md, Measurements behind the code).
OPENMP_SPINS = 10_000


def bound_openmp_spinning() -> None:
    """The engine's threads spin briefly, then sleep; an explicit OpenMP setting wins. Without
    one, GNU OpenMP spins 300,000 times between calls; told to be passive, it sleeps at every
    barrier and a query is slower on two cores than on one."""
    if "OMP_WAIT_POLICY" not in os.environ:
        os.environ.setdefault("GOMP_SPINCOUNT", str(OPENMP_SPINS))
