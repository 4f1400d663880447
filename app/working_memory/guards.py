"""The five section guards (docs/peers.md, OpenViking §3.4–§3.8); the merge that runs them is
``app.working_memory.section_merge``.

The model only decides what changed; these functions make sure nothing is lost. Every op is a
dict ``{"op": "KEEP"}``, ``{"op": "UPDATE", "content": str}`` or ``{"op": "APPEND", "items": [...]}``.
"""

from __future__ import annotations

import re
from typing import Any

from app.core.rules.tokens import estimate_text_tokens
from app.working_memory.document import (
    extract_bullet_items,
)

Op = dict[str, Any]

# docs/peers.md, OpenViking §3.5 constants.
WM_SECTION_BULLET_THRESHOLD = 25
WM_SECTION_TOKEN_THRESHOLD = 1500
WM_OVERSIZED_APPEND_CAP = 5
WM_KEY_FACTS_MIN_BULLET_RATIO = 0.15
WM_KEY_FACTS_MIN_ANCHOR_COVERAGE = 0.70
WM_EMERGENCY_BULLETS = 50
WM_EMERGENCY_TOKENS = 3000
WM_CONSOLIDATION_SENTINEL = (
    "[⚠ CONSOLIDATION REQUIRED: Key Facts exceeds size limit. You MUST use UPDATE to merge and "
    "compress existing bullets before adding new facts.]"
)
# docs/peers.md, OpenViking §3.8: the literal marker, not the design document's "[restored]".
WM_RESTORED_MARKER = "[silently dropped, restored]"
WM_APPEND_ONLY_SECTIONS = frozenset({"Errors & Corrections"})

WM_TITLE_STOPWORDS = frozenset(
    "the a an and or of to in on for with by at from session title working memory plan plans "
    "notes note".split()
)
WM_ANCHOR_STOPWORDS = frozenset(
    "the a an and or of to in on for with by at from is are was were has have had been be will "
    "would could should may might shall this that these those not no but if then so as it its "
    "they their them she her he him his we our us you your who which what when where how why all "
    "each every both few more most other some such than too very also just about after before "
    "between into through during again further once here there over under out up down off own "
    "same only new old key facts decisions session working memory".split()
)

_TITLE_WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9\.]{2,}|[\d\.]+")
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_NUMBER_UNITS = (
    "years?|months?|weeks?|days?|kids?|children|hours?|miles?|times?|sessions?|rounds?|visits?|"
    "dollars?|euros?|pounds?|bedrooms?|paintings?|people|persons?"
)
# docs/peers.md, OpenViking §3.5 anchor sources; proper nouns are case-sensitive, the rest are not.
ANCHOR_VALUE_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\b\d{4}-\d{2}-\d{2}\b"),
    re.compile(rf"\b\d{{1,2}}\s+(?:{_MONTHS})\s+\d{{4}}\b", re.IGNORECASE),
    re.compile(rf"\b\d+\s+(?:{_NUMBER_UNITS})\b", re.IGNORECASE),
    re.compile(r"\$\d[\d,]*"),
    re.compile(r"\b\d+\s+(?:AM|PM)\b", re.IGNORECASE),
    re.compile(r"\b(?:because|decided|chose|committed|agreed|resolved)\b", re.IGNORECASE),
)
_PROPER_NOUN_RE = re.compile(r"\b[A-Z][a-zA-Z]{2,}\b")

# docs/peers.md, OpenViking §3.6 (the extension list has no trailing boundary: "x.json" matches "x.js").
WM_PATH_LIKE_RE = re.compile(
    r"(?:[\w./\\-]+\.(?:py|ts|tsx|js|jsx|md|yaml|yml|json|sh|ps1|cmd|bat|toml|ini|cfg|rs|go))"
    r"|(?:[a-zA-Z_][\w\-]*(?:/[a-zA-Z_][\w\-]*){1,})",
    re.IGNORECASE,
)
# The path pattern backtracks over every start of a long run of path characters (time quadratic in
# the run's length: bench/RESULTS.md, Measurements behind the code); a path holds no whitespace, so
# it is matched token by token, and a token longer than this is not a path.
PATH_TOKEN_MAX_CHARS = 256


def path_likes(text: str) -> set[str]:
    """The path-like strings of a text (WM_PATH_LIKE_RE, in tokens of at most
    PATH_TOKEN_MAX_CHARS characters)."""
    return {
        path
        for token in text.split()
        if len(token) <= PATH_TOKEN_MAX_CHARS
        for path in WM_PATH_LIKE_RE.findall(token)
    }


def _keep() -> Op:
    return {"op": "KEEP"}


def op_name(op: Any) -> str:
    """The upper-cased op name of a dict op, ``""`` when absent."""
    if not isinstance(op, dict):
        return ""
    value = op.get("op")
    return value.upper() if isinstance(value, str) else ""


def _content(op: Op) -> str:
    value = op.get("content")
    return value if isinstance(value, str) else ""


def is_fresh(item: str, old_lower: str) -> bool:
    """An item is fresh unless its edge-stripped lowercase text is a substring of the old body."""
    return item.strip("_* `").lower() not in old_lower


def _fresh_items(items: list[str], old: str) -> list[str]:
    old_lower = old.lower()
    return [item for item in items if is_fresh(item, old_lower)]


def _meaningful_words(text: str) -> set[str]:
    words = {w.lower() for w in _TITLE_WORD_RE.findall(text or "")}
    return words - WM_TITLE_STOPWORDS


def enforce_title_stability(op: Any, old: str) -> Op:
    """Guard 1: an UPDATE sharing no meaningful word with the old title becomes KEEP (§3.4)."""
    if not isinstance(op, dict):
        return _keep()
    if op_name(op) != "UPDATE":
        return op
    old_words = _meaningful_words(old)
    if not old_words:
        return op
    if old_words & _meaningful_words(_content(op)):
        return op
    return _keep()


def extract_lexical_anchors(text: str | None) -> set[str]:
    """Dates, number phrases, money, decision markers and proper-noun-ish tokens, lowercased (§3.5)."""
    if not text:
        return set()
    anchors: set[str] = set()
    for pattern in ANCHOR_VALUE_PATTERNS:
        anchors.update(m.group(0).strip().lower() for m in pattern.finditer(text))
    for token in _PROPER_NOUN_RE.findall(text):
        lowered = token.lower()
        if lowered not in WM_ANCHOR_STOPWORDS:
            anchors.add(lowered)
    return anchors


def _is_emergency(old_items: list[str], tokens: int) -> bool:
    return len(old_items) > WM_EMERGENCY_BULLETS or tokens > WM_EMERGENCY_TOKENS


def _key_facts_append(op: Op, old: str, old_items: list[str], tokens: int) -> Op:
    if len(old_items) <= WM_SECTION_BULLET_THRESHOLD and tokens <= WM_SECTION_TOKEN_THRESHOLD:
        return op
    raw_items = op.get("items")
    if isinstance(raw_items, str):
        raw_items = [raw_items]
    if not isinstance(raw_items, (list, tuple)):
        raw_items = []
    if not raw_items:
        raw_items = extract_bullet_items(_content(op))
    # Oversized path stringifies: 123 -> "123", None dropped (§3.5).
    fresh = _fresh_items([str(item) for item in raw_items if item], old)
    if _is_emergency(old_items, tokens):
        if WM_CONSOLIDATION_SENTINEL.lower() in old.lower():
            return _keep()
        return {"op": "APPEND", "items": [WM_CONSOLIDATION_SENTINEL]}
    if not fresh:
        return _keep()
    return {"op": "APPEND", "items": fresh[:WM_OVERSIZED_APPEND_CAP]}


def _consolidation_rejected(
    old: str, old_items: list[str], content: str, new_items: list[str]
) -> bool:
    # Layer 1: too few bullets left.
    if len(new_items) / len(old_items) < WM_KEY_FACTS_MIN_BULLET_RATIO:
        return True
    # Layer 2: too few lexical anchors kept.
    old_anchors = extract_lexical_anchors(old)
    if not old_anchors:
        return False
    kept = old_anchors & extract_lexical_anchors(content)
    return len(kept) / len(old_anchors) < WM_KEY_FACTS_MIN_ANCHOR_COVERAGE


def _key_facts_update(op: Op, old: str, old_items: list[str], tokens: int) -> Op:
    content = _content(op).strip()
    new_items = extract_bullet_items(content)
    if not old_items:
        return op
    if not _consolidation_rejected(old, old_items, content, new_items):
        return op  # accepted even in emergency: consolidation is the intended exit
    fresh = _fresh_items(new_items, old)
    if _is_emergency(old_items, tokens) or not fresh:
        return _keep()
    return {"op": "APPEND", "items": fresh}


def enforce_key_facts_consolidation(op: Any, old: str) -> Op:
    """Guard 2: throttle APPENDs on an oversized section; UPDATE must keep bullets and anchors (§3.5)."""
    if not isinstance(op, dict):
        return _keep()
    kind = op_name(op)
    if kind == "KEEP":
        return op
    old_items = extract_bullet_items(old)
    tokens = estimate_text_tokens(old)
    if kind == "APPEND":
        return _key_facts_append(op, old, old_items, tokens)
    if kind == "UPDATE":
        return _key_facts_update(op, old, old_items, tokens)
    return _keep()


def enforce_files_no_regression(op: Any, old: str) -> Op:
    """Guard 3: an UPDATE may not lose a path; lost paths → KEEP (+ APPEND of new paths) (§3.6)."""
    if not isinstance(op, dict):
        return _keep()
    if op_name(op) != "UPDATE":
        return op
    new = _content(op)
    old_paths = path_likes(old)
    new_paths = path_likes(new)
    if not old_paths - new_paths:
        return op
    added = sorted(new_paths - old_paths)
    if not added:
        return _keep()
    items: list[str] = []
    for path in added:
        line = next((ln for ln in new.splitlines() if path in ln), None)
        items.append(
            line.strip().lstrip("-*").strip() if line is not None else f"{path} (newly referenced)"
        )
    return {"op": "APPEND", "items": items}


def enforce_append_only(header: str, op: Any, old: str) -> Op:  # noqa: ARG001
    """Guard 4: KEEP/APPEND pass; UPDATE is demoted to an APPEND of its fresh bullets (§3.7)."""
    # Generic over sections: ``header`` only names the caller's section.
    kind = op_name(op)
    if kind in ("KEEP", "APPEND") and isinstance(op, dict):  # a named op is always a dict
        return op
    if kind != "UPDATE":
        return _keep()
    fresh = _fresh_items(extract_bullet_items(_content(op)), old)
    return {"op": "APPEND", "items": fresh} if fresh else _keep()


def enforce_open_issues_resolved(op: Any, old: str) -> Any:
    """Guard 5: old items missing from an UPDATE are restored once with the marker (§3.8)."""
    if not isinstance(op, dict) or op_name(op) != "UPDATE":
        return op  # None stays None: the merge keeps the old body
    new_content = _content(op)
    new_lower = new_content.lower()
    dropped: list[str] = []
    for item in extract_bullet_items(old):
        if WM_RESTORED_MARKER in item:
            continue  # restored once already ("one round" rule)
        snippet = item[:40].lower().strip("_* `").strip()
        if snippet and snippet not in new_lower:
            dropped.append(item)
    if not dropped:
        return op
    restored = "\n".join(f"- {WM_RESTORED_MARKER} {item}" for item in dropped)
    merged = f"{new_content}\n{restored}" if new_content else restored
    return {**op, "content": merged}
