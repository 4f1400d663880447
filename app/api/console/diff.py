"""Side-by-side line diff of two Working Memory versions, and the marks the guards leave in one."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from app.working_memory.guards import WM_CONSOLIDATION_SENTINEL, WM_RESTORED_MARKER


@dataclass(frozen=True, slots=True)
class DiffRow:
    """One row of the side-by-side table; a side is None where that version has no line."""

    kind: str  # "same", "changed", "removed", "added"
    old_number: int | None
    old_text: str | None
    new_number: int | None
    new_text: str | None


def side_by_side(old: str, new: str) -> list[DiffRow]:
    """Rows pairing the lines of ``old`` and ``new``: unchanged, changed, removed or added."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    rows: list[DiffRow] = []
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            rows += [
                DiffRow("same", i + 1, old_lines[i], j + 1, new_lines[j])
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
            ]
            continue
        width = max(i2 - i1, j2 - j1)
        for k in range(width):
            i, j = i1 + k, j1 + k
            left = (i + 1, old_lines[i]) if i < i2 else (None, None)
            right = (j + 1, new_lines[j]) if j < j2 else (None, None)
            kind = "changed" if left[0] and right[0] else ("removed" if left[0] else "added")
            rows.append(DiffRow(kind, left[0], left[1], right[0], right[1]))
    return rows


def diff_counts(rows: list[DiffRow]) -> dict[str, int]:
    counts = {"changed": 0, "removed": 0, "added": 0}
    for row in rows:
        if row.kind in counts:
            counts[row.kind] += 1
    return counts


def guard_marks(overview: str) -> list[str]:
    """Lines of a Working Memory that a guard wrote: items it restored after the model dropped
    them, and the demand to consolidate an oversized Key Facts section."""
    return [
        line.strip()
        for line in overview.splitlines()
        if WM_RESTORED_MARKER in line or WM_CONSOLIDATION_SENTINEL in line
    ]
