"""Ranking of recalled memories before injection: the reference's ``postProcessMemories`` and
``pickMemoriesForInjection`` (docs/recall.md, Long-term recall; docs/peers.md, OpenViking §5.6).

Items are plain dicts shaped as :class:`MemoryItem`; every key is optional and read with
``.get``. Scores are never mutated: the functions return (a selection of) the same dict objects.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Any, TypedDict


class MemoryItem(TypedDict, total=False):
    """A recalled memory, as the search hands it to ranking and rendering."""

    # score: the search score (0..1, clamped here); level: 2 for a leaf, a whole memory file;
    # content: the text to inject; abstract: its one-line summary.
    id: str
    uri: str
    category: str
    title: str
    abstract: str
    content: str
    score: float
    level: int | None


LEAF_LEVEL = 2
LEAF_BOOST = 0.12
TEMPORAL_EVENT_BOOST = 0.10
PREFERENCE_BOOST = 0.08
MAX_LEXICAL_BOOST = 0.2
LEXICAL_TOKENS_CHECKED = 8
LEXICAL_TOKENS_FOR_FULL_BOOST = 4
EXPERIENCE_CATEGORIES = frozenset({"experience", "experiences"})

# docs/peers.md, OpenViking §5.6, pickMemoriesForInjection: the reference's patterns (no word boundaries).
PREFERENCE_QUERY_RE = re.compile(
    r"prefer|preference|favorite|favourite|like|偏好|喜欢|爱好|更倾向", re.I
)
TEMPORAL_QUERY_RE = re.compile(
    r"when|what time|date|day|month|year|yesterday|today|tomorrow|last|next"
    r"|什么时候|何时|哪天|几月|几年|昨天|今天|明天|上周|下周|上个月|下个月|去年|明年",
    re.I,
)
LEXICAL_STOPWORDS = frozenset(
    "what when where which who whom whose why how did does is are was were the and for with from "
    "that this your you".split()
)
_LEXICAL_TOKEN_RE = re.compile(r"[a-z0-9]{2,}")
_SPACES_RE = re.compile(r"\s+")


def clamp_score(value: Any) -> float:
    """A score clamped to [0, 1]; anything that is not a finite number counts as 0."""
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return 0.0
    return min(1.0, max(0.0, float(value)))


def _text(item: MemoryItem, key: str) -> str:
    value = item.get(key)
    return value if isinstance(value, str) else ""


def is_leaf(item: MemoryItem) -> bool:
    """A leaf memory: level 2, or no level at all (docs/peers.md, OpenViking §5.6, step 8.2)."""
    return item.get("level") in (None, LEAF_LEVEL)


def is_experience(item: MemoryItem) -> bool:
    """Whether an item is an agent experience, by category or uri."""
    category = _text(item, "category").lower()
    return category in EXPERIENCE_CATEGORIES or "/experiences/" in _text(item, "uri")


def _is_event_or_case(item: MemoryItem) -> bool:
    uri = _text(item, "uri")
    return _text(item, "category") in ("events", "cases") or "/events/" in uri or "/cases/" in uri


def _dedupe_key(item: MemoryItem) -> str:
    """postProcessMemories step 3: events and cases by uri, everything else by abstract."""
    if _is_event_or_case(item):
        return "uri:" + _text(item, "uri")
    abstract = _SPACES_RE.sub(" ", _text(item, "abstract")).strip().lower()
    if not abstract:
        return "uri:" + _text(item, "uri")  # no abstract: only the same file is a duplicate
    return f"abstract:{_text(item, 'category').lower() or 'unknown'}:{abstract}"


def post_process_memories(
    items: Iterable[MemoryItem], limit: int, score_threshold: float, *, leaf_only: bool = False
) -> list[MemoryItem]:
    """Sort by clamped score, drop those under the threshold, de-duplicate, cap at ``limit``."""
    # docs/peers.md, OpenViking §5.6, postProcessMemories steps 1-4.
    if limit <= 0:
        return []
    ordered = sorted(items, key=lambda item: clamp_score(item.get("score")), reverse=True)
    seen: set[str] = set()
    kept: list[MemoryItem] = []
    for item in ordered:
        if clamp_score(item.get("score")) < score_threshold or (leaf_only and not is_leaf(item)):
            continue
        key = _dedupe_key(item)
        if key in seen:
            continue
        seen.add(key)
        kept.append(item)
        if len(kept) >= limit:
            break
    return kept


def query_tokens(query: str) -> list[str]:
    """The lexical-overlap tokens of a query: lowercase ``[a-z0-9]{2,}`` minus stopwords."""
    return [t for t in _LEXICAL_TOKEN_RE.findall(query.lower()) if t not in LEXICAL_STOPWORDS]


def lexical_overlap(tokens: Sequence[str], item: MemoryItem) -> float:
    """Up to 0.2 for the first 8 query tokens found in the item's uri or abstract."""
    if not tokens:
        return 0.0
    haystack = f" {_text(item, 'uri')} {_text(item, 'abstract')} ".lower()
    matched = sum(1 for token in tokens[:LEXICAL_TOKENS_CHECKED] if token in haystack)
    ratio = matched / min(len(tokens), LEXICAL_TOKENS_FOR_FULL_BOOST)
    return min(MAX_LEXICAL_BOOST, ratio * MAX_LEXICAL_BOOST)


def _is_event(item: MemoryItem) -> bool:
    return _text(item, "category") == "events" or "/events/" in _text(item, "uri")


def _is_preference(item: MemoryItem) -> bool:
    uri = _text(item, "uri")
    return (
        _text(item, "category") == "preferences"
        or "/preferences/" in uri
        or uri.endswith("/preferences")
    )


def injection_rank(item: MemoryItem, query: str, tokens: Sequence[str] | None = None) -> float:
    """The reference's injection rank of one item for a query."""
    # docs/peers.md, OpenViking §5.6, pickMemoriesForInjection: score each item.
    rank = clamp_score(item.get("score"))
    if item.get("level") == LEAF_LEVEL:
        rank += LEAF_BOOST
    if TEMPORAL_QUERY_RE.search(query) and _is_event(item):
        rank += TEMPORAL_EVENT_BOOST
    if PREFERENCE_QUERY_RE.search(query) and _is_preference(item):
        rank += PREFERENCE_BOOST
    return rank + lexical_overlap(query_tokens(query) if tokens is None else tokens, item)


def pick_memories_for_injection(
    items: Iterable[MemoryItem], limit: int, query: str, threshold: float = 0.0
) -> list[MemoryItem]:
    """Rank for injection, de-duplicate by abstract, prefer leaves, keep at most ``limit``."""
    # docs/peers.md, OpenViking §5.6, pickMemoriesForInjection: selection steps 1-4.
    tokens = query_tokens(query)
    ranked = sorted(items, key=lambda item: injection_rank(item, query, tokens), reverse=True)
    seen: set[str] = set()
    unique: list[MemoryItem] = []
    for item in ranked:
        key = (_text(item, "abstract") or _text(item, "uri") or _text(item, "id")).strip().lower()
        if key in seen:
            continue
        seen.add(key)
        unique.append(item)
    leaves = [item for item in unique if is_leaf(item)]
    if len(leaves) >= limit:
        return leaves[:limit]
    others = [
        item for item in unique if not is_leaf(item) and clamp_score(item.get("score")) >= threshold
    ]
    return (leaves + others)[:limit]
