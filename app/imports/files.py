"""The JSON Lines session files under a path, each read by a format's reader, unreadable files
and a path without any reported as problems (Claude Code's projects, Codex's rollouts)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.imports.records import Problem, ReadResult

# A format's reader of one file: its lines, the file's name as the source, its stem as the
# session id when the lines do not name one.
FileReader = Callable[[Any, str, str], ReadResult]


def read_session_files(path: Path, read: FileReader, kind: str) -> ReadResult:
    """Every ``*.jsonl`` file under ``path`` (or ``path`` itself, a file) read by ``read``;
    ``kind`` names the files in the problem reported when there are none."""
    files = [path] if path.is_file() else sorted(path.glob("**/*.jsonl"))
    result = ReadResult()
    for file in files:
        try:
            with file.open(encoding="utf-8", errors="replace") as handle:
                result.extend(read(handle, str(file), file.stem))
        except OSError as exc:
            result.problems.append(Problem(str(file), 0, f"cannot read: {exc.strerror}"))
    if not files:
        result.problems.append(Problem(str(path), 0, f"no {kind} file found here"))
    return result
