"""Where a profiled server spent its time: ``python -m bench.profile <file.folded> [--top N]``.

Reads py-spy's folded stacks (``CE_BENCH_PROFILE=<dir> python -m bench --only after-turn``) and
prints, for the service's own functions and the libraries they call, the share of samples in which
each function is on the stack (inclusive) and at the top of it (self).
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

_FRAME = re.compile(r"^(?P<func>[^ ]+) \((?P<file>[^:]+)(?::\d+)?\)$")


def _frame_name(frame: str) -> str:
    match = _FRAME.match(frame)
    if not match:
        return frame
    file = match["file"]
    for marker in ("/app/", "site-packages/", "/lib/python3"):
        if marker in file:
            file = file.split(marker, 1)[1]
            break
    return f"{match['func']} ({file})"


def summarise(path: Path) -> tuple[int, Counter[str], Counter[str]]:
    total, inclusive, own = 0, Counter[str](), Counter[str]()
    for line in path.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [_frame_name(f) for f in stack.split(";")]
        total += count
        for name in set(frames):
            inclusive[name] += count
        own[frames[-1]] += count
    return total, inclusive, own


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    total, inclusive, own = summarise(args.file)
    print(f"{total} samples")
    print("\ninclusive (on the stack)")
    for name, count in inclusive.most_common(args.top):
        print(f"{100 * count / total:6.1f}%  {name}")
    print("\nself (top of the stack)")
    for name, count in own.most_common(args.top):
        print(f"{100 * count / total:6.1f}%  {name}")


if __name__ == "__main__":
    main()
