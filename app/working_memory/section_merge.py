"""The section-by-section merge of a Working Memory update (docs/peers.md, OpenViking §3.3): each
section's op passes its guard (``app.working_memory.guards``), then is applied to the old body."""

from __future__ import annotations

import logging
from typing import Any

from app.working_memory.document import (
    WM_SEVEN_SECTIONS,
    parse_wm_sections,
    render_wm,
    section_key,
)
from app.working_memory.guards import (
    WM_APPEND_ONLY_SECTIONS,
    enforce_append_only,
    enforce_files_no_regression,
    enforce_key_facts_consolidation,
    enforce_open_issues_resolved,
    enforce_title_stability,
    op_name,
)

logger = logging.getLogger(__name__)


def _guard(name: str, op: Any, old: str) -> Any:
    if name == "Session Title":
        return enforce_title_stability(op, old)
    if name == "Key Facts & Decisions":
        return enforce_key_facts_consolidation(op, old)
    if name in WM_APPEND_ONLY_SECTIONS:
        return enforce_append_only(section_key(name), op, old)
    if name == "Files & Context":
        return enforce_files_no_regression(op, old)
    if name == "Open Issues":
        return enforce_open_issues_resolved(op, old)
    return op


def _apply_op(name: str, op: Any, old: str) -> str:
    if op is None:
        return old
    kind = op_name(op)
    if kind == "KEEP":
        return old
    if kind == "UPDATE" and isinstance(content := op.get("content"), str):
        return content.strip()
    if kind == "APPEND":
        raw = op.get("items")
        items = raw if isinstance(raw, (list, tuple)) else []
        if any(not isinstance(s, str) for s in items):
            logger.warning("working memory: non-string APPEND items dropped in %s", name)
        kept = [s.strip() for s in items if isinstance(s, str) and s.strip()]
        appended = "\n".join(f"- {s}" for s in kept)
        return f"{old}\n{appended}" if old and appended else (old or appended)
    logger.warning("working memory: unusable op %r for %s, kept old", op, name)
    return old


def merge_wm_sections(old_wm: str | None, ops: dict[str, Any] | None) -> str:
    """Merge per-section ops into the old WM through the guards; always renders all 7 sections."""
    parsed = parse_wm_sections(old_wm)
    ops = ops if isinstance(ops, dict) else {}
    bodies: dict[str, str] = {}
    for name in WM_SEVEN_SECTIONS:
        old = parsed.get(section_key(name), "").rstrip()
        op = ops.get(name)
        if old:  # docs/peers.md, OpenViking §3.3: guards run only on a non-empty old section
            op = _guard(name, op, old)
        bodies[name] = _apply_op(name, op, old)
    return render_wm(bodies)
