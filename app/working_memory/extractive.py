"""Deterministic Working Memory builder for when no LLM is configured.

docs/working-memory.md "Without an LLM": the archive's messages become per-section ops that are merged
into the prior WM through the same guards as any model answer, so the guards bound growth. The
per-section collectors are in ``app.working_memory.extractive_sections``.
"""

from __future__ import annotations

from typing import Any

from app.core.rules.tokens import estimate_text_tokens
from app.search.text.query import speaker_label
from app.working_memory.document import (
    CURRENT_STATE_MAX_CHARS,
    WM_TOKEN_BUDGET,
    is_wm_v2,
    parse_wm_sections,
    section_key,
    shorten,
    split_sentences,
    trim_free_sections,
)
from app.working_memory.extractive_sections import (
    BULLET_MAX_CHARS,
    LEADING_META_RE,
    OPEN_ISSUES_WINDOW,
    Collector,
    View,
    collect_errors,
    collect_files,
    collect_goals,
    collect_key_facts,
    collect_open_issues,
    read_views,
)
from app.working_memory.section_merge import merge_wm_sections

TITLE_MAX_WORDS = 8
TITLE_MAX_CHARS = 80
# Per-archive caps: an archive adds a handful of bullets per section, never a dump.
SECTION_CAPS: dict[str, int] = {
    "Task & Goals": 6,
    "Key Facts & Decisions": 12,
    "Files & Context": 12,
    "Errors & Corrections": 6,
    "Open Issues": 5,
}
_TITLE_FILLER = frozenset(
    "please pls can could would will you help me i we want need to let's lets hi hello hey".split()
)
_EDGE_PUNCT = "\"'`()[]{}<>,;:!?。，、；：！？（）【】「」《》“”‘’"


def make_title(request: str) -> str:
    """A few meaningful words of a request: first sentence, leading filler dropped, ≤ 8 words."""
    request = LEADING_META_RE.sub("", request or "", count=1)
    sentences = split_sentences(request[len(speaker_label(request)) :])
    if not sentences:
        return ""
    words = [w for w in (w.strip(_EDGE_PUNCT) for w in sentences[0].split()) if w]
    while len(words) > 1 and words[0].lower() in _TITLE_FILLER:
        words.pop(0)
    title = " ".join(words[:TITLE_MAX_WORDS]).rstrip(".,;:!?。！？")
    return shorten(title, TITLE_MAX_CHARS)


def _current_state(views: list[View]) -> dict[str, Any]:
    users = [v.prose for v in views if v.role == "user" and v.prose.strip()]
    answers = [v.prose for v in views if v.role == "assistant" and v.prose.strip()]
    parts: list[str] = []
    if users:
        parts.append("Latest request: " + shorten(users[-1], 280))
    if answers:
        gist = " ".join(split_sentences(answers[-1])[:2])
        parts.append("Latest answer: " + shorten(gist, 280))
    if not parts:
        return {"op": "KEEP"}
    return {"op": "UPDATE", "content": "\n".join(parts)[:CURRENT_STATE_MAX_CHARS]}


def _title(
    views: list[View], prior: dict[str, str], first_user_request: str | None
) -> dict[str, Any]:
    if prior.get(section_key("Session Title"), "").strip():
        return {"op": "KEEP"}  # the title is stable once set
    request = first_user_request or next(
        (v.prose for v in views if v.role == "user" and v.prose.strip()), ""
    )
    title = make_title(request)
    return {"op": "UPDATE", "content": title} if title else {"op": "KEEP"}


def build_extractive_ops(
    messages: list[dict[str, Any]], *, prior_wm: str | None, first_user_request: str | None
) -> dict[str, dict[str, Any]]:
    """Per-section ops for one archive, built deterministically from its messages."""
    views = read_views(messages or [])
    prior = parse_wm_sections(prior_wm)
    collectors = {
        name: Collector(prior.get(section_key(name), ""), cap) for name, cap in SECTION_CAPS.items()
    }
    facts = collect_key_facts(views, collectors["Key Facts & Decisions"])
    collect_goals(views, collectors["Task & Goals"], facts)
    collect_files(views, collectors["Files & Context"])
    collect_errors(views, collectors["Errors & Corrections"])
    collect_open_issues(views, collectors["Open Issues"])
    ops: dict[str, dict[str, Any]] = {
        "Session Title": _title(views, prior, first_user_request),
        "Current State": _current_state(views),
    }
    ops.update({name: collector.op() for name, collector in collectors.items()})
    return ops


def _drop_appended(ops: dict[str, dict[str, Any]], over: int) -> bool:
    """Drop this archive's newest appended items, Key Facts first, Open Issues last."""
    dropped = False
    for name in ("Key Facts & Decisions", "Files & Context", "Errors & Corrections", "Open Issues"):
        op = ops.get(name) or {}
        items = op.get("items") if op.get("op") == "APPEND" else None
        while items and over > 0:
            over -= estimate_text_tokens(items.pop()) + 1
            dropped = True
        if items == []:
            ops[name] = {"op": "KEEP"}
    return dropped


def _copy_op(op: dict[str, Any]) -> dict[str, Any]:
    items = op.get("items")
    return {**op, "items": list(items)} if isinstance(items, list) else dict(op)


def fit_to_budget(
    prior_wm: str | None, ops: dict[str, dict[str, Any]], budget: int = WM_TOKEN_BUDGET
) -> str:
    """Merge ``ops`` into the prior within the token budget; guarded old content is never cut."""
    ops = {name: _copy_op(op) for name, op in ops.items()}
    doc = merge_wm_sections(prior_wm, ops)
    while estimate_text_tokens(doc) > budget:
        doc = trim_free_sections(doc, budget)
        over = estimate_text_tokens(doc) - budget
        if over <= 0 or not _drop_appended(ops, over):
            break
        doc = merge_wm_sections(prior_wm, ops)
    return doc


def update_working_memory_extractive(
    prior_wm: str | None, messages: list[dict[str, Any]], first_user_request: str | None = None
) -> str:
    """The next WM without an LLM: extractive ops merged into the prior through the guards."""
    prior = prior_wm if is_wm_v2(prior_wm) else None  # a legacy prior starts a fresh document
    ops = build_extractive_ops(messages, prior_wm=prior, first_user_request=first_user_request)
    return fit_to_budget(prior, ops)


__all__ = [
    "BULLET_MAX_CHARS",
    "OPEN_ISSUES_WINDOW",
    "SECTION_CAPS",
    "TITLE_MAX_CHARS",
    "TITLE_MAX_WORDS",
    "build_extractive_ops",
    "fit_to_budget",
    "make_title",
    "shorten",
    "update_working_memory_extractive",
]
