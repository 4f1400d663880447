"""Install size of a distribution and everything it requires, in the interpreter that runs it.

    <venv>/bin/python bench/peer/sizes.py DIST [DIST ...]

Prints JSON: the venv's total size, and for the named distributions the closure of their
``Requires-Dist`` (extras left out, so optional and development dependencies are not counted):
the number of distributions and the bytes their installed files take (from each RECORD). Sizes
are apparent sizes in bytes. Standard library only, so it runs in any venv.
"""

from __future__ import annotations

import json
import os
import re
import sys
from importlib import metadata
from pathlib import Path

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements(dist: metadata.Distribution) -> list[str]:
    names = []
    for req in dist.requires or []:
        head, _, marker = req.partition(";")
        if "extra" in marker:
            continue
        match = _NAME.match(head)
        if match:
            names.append(_norm(match.group(1)))
    return names


def closure(roots: list[str]) -> tuple[list[str], int]:
    installed = {
        _norm(d.metadata["Name"]): d for d in metadata.distributions() if d.metadata["Name"]
    }
    seen: set[str] = set()
    todo = [_norm(r) for r in roots]
    size = 0
    while todo:
        name = todo.pop()
        if name in seen or name not in installed:
            continue
        seen.add(name)
        dist = installed[name]
        for file in dist.files or []:
            path = Path(dist.locate_file(file))
            try:
                if path.is_file() and not path.is_symlink():
                    size += path.stat().st_size
            except OSError:
                continue
        todo.extend(_requirements(dist))
    return sorted(seen), size


def tree_size(root: Path) -> int:
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            path = Path(folder) / name
            try:
                if not path.is_symlink():
                    total += path.stat().st_size
            except OSError:
                continue
    return total


def main() -> None:
    dists, size = closure(sys.argv[1:])
    print(
        json.dumps(
            {
                "venv_bytes": tree_size(Path(sys.prefix)),
                "closure_bytes": size,
                "closure_dists": len(dists),
                "python": sys.version.split()[0],
            }
        )
    )


if __name__ == "__main__":
    main()
