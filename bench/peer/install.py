"""One-time installs into the ignored ``.cache/`` folder, reused by later runs.

- ``.cache/peer-venv``: OpenViking 0.5.2 and its dependencies (about 1.3 GB, minutes to install),
  in a venv of its own so that nothing of it reaches this project's environment.
- ``.cache/bench-plot-venv``: matplotlib, for the plot. It gets its own small venv rather than a
  place in either measured environment: in the project's ``.venv`` it would be a dependency that
  only the benchmark needs, and in the peer's venv it would inflate the peer's install size that
  the benchmark reports.

A venv counts as ready when its interpreter reports the pinned version; otherwise it is
(re)created with the interpreter running the benchmark (Python 3.11).
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from bench.common import REPO_ROOT

CACHE = REPO_ROOT / ".cache"
PEER_VENV = CACHE / "peer-venv"
PLOT_VENV = CACHE / "bench-plot-venv"
PEER_REQUIREMENT = ("openviking", "0.5.2")
PLOT_REQUIREMENT = ("matplotlib", None)


def _installed_version(venv: Path, dist: str) -> str | None:
    python = venv / "bin" / "python"
    if not python.exists():
        return None
    probe = subprocess.run(
        [str(python), "-c", f"import importlib.metadata as m; print(m.version({dist!r}))"],
        capture_output=True,
        text=True,
        check=False,
    )
    return probe.stdout.strip() or None if probe.returncode == 0 else None


def _base_python() -> str:
    """The base interpreter, so the new venv does not chain to the project's."""
    return getattr(sys, "_base_executable", None) or sys.executable


def ensure_venv(venv: Path, dist: str, version: str | None, log: Callable[[str], None]) -> float:
    """Create/repair ``venv`` with ``dist`` (``==version`` when given); seconds spent (0 if ready)."""
    found = _installed_version(venv, dist)
    if found and (version is None or found == version):
        return 0.0
    started = time.perf_counter()
    spec = f"{dist}=={version}" if version else dist
    shown = venv.relative_to(REPO_ROOT) if venv.is_relative_to(REPO_ROOT) else venv
    log(f"installing {spec} into {shown} (once; openviking takes minutes) ...")
    CACHE.mkdir(exist_ok=True)
    if not (venv / "bin" / "python").exists():
        subprocess.run([_base_python(), "-m", "venv", str(venv)], check=True)
    pip = [
        str(venv / "bin" / "python"),
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
    ]
    subprocess.run([*pip, "--upgrade", "pip"], check=True)
    subprocess.run([*pip, spec], check=True)
    found = _installed_version(venv, dist)
    if not found or (version and found != version):
        raise RuntimeError(f"{spec} did not install into {venv} (found {found})")
    spent = time.perf_counter() - started
    log(f"  {spec} installed in {spent:.0f} s")
    return spent


def ensure_peer(log: Callable[[str], None]) -> float:
    return ensure_venv(PEER_VENV, *PEER_REQUIREMENT, log)


def ensure_plot(log: Callable[[str], None]) -> float:
    return ensure_venv(PLOT_VENV, *PLOT_REQUIREMENT, log)
