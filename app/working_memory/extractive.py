"""Deterministic Working Memory builder for when no LLM is configured.

working-memory.md "Without an LLM": the archive's messages become per-section ops that are merged
into the prior WM through the same guards as any model answer, so the guards bound growth.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from app.core.messages import content_blocks, message_text, role_of
from app.core.tokens import estimate_text_tokens
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
from app.working_memory.guards import (
    ANCHOR_VALUE_PATTERNS,
    WM_PATH_LIKE_RE,
    is_fresh,
    merge_wm_sections,
)

BULLET_MAX_CHARS = 240
TITLE_MAX_WORDS = 8
TITLE_MAX_CHARS = 80
# Per-archive caps: an archive adds a handful of bullets per section, never a dump.
SECTION_CAPS: dict[str, int] = {
    "Task & Goals": 6,
    "Key Facts & Decisions": 8,
    "Files & Context": 12,
    "Errors & Corrections": 6,
    "Open Issues": 5,
}
OPEN_ISSUES_WINDOW = 20  # "from the latest messages"
_SCAN_CHARS = 20_000  # per message: bounds the work on huge tool outputs
_TOKEN_SCAN_CHARS = 256  # the path regex backtracks; long blobs are not paths

_LEADING_META_RE = re.compile(r"^\s*\[[^\]\n]{1,80}\]\s*")
_FAILURE_RE = re.compile(
    r"error|fail|exception|traceback|crash|fatal|panic|wrong|incorrect|mistake"
    r"|失败|错误|报错|异常|出错",
    re.IGNORECASE,
)
_TODO_RE = re.compile(
    r"\b(?:TODO|FIXME|XXX|pending|follow[- ]?up|next steps?|not yet|still needs?|blocked|blocker"
    r"|unresolved|TBD)\b|待办|待处理|未解决|还需要|下一步",
    re.IGNORECASE,
)
_TITLE_FILLER = frozenset(
    "please pls can could would will you help me i we want need to let's lets hi hello hey".split()
)
# Bare acknowledgements are not requests.
_ACKS = frozenset("ok okay k thanks thx yes no sure continue 好 好的 继续 谢谢 嗯 对".split())
_ACKS |= {"thank you", "go ahead", "go on"}
_EDGE_PUNCT = "\"'`()[]{}<>,;:!?"


@dataclass(frozen=True, slots=True)
class _View:
    role: str
    text: str  # all prompt-visible text (tool calls included), bounded
    prose: str  # what the user/assistant actually wrote
    is_error: bool
    tool_name: str


def _flat(text: str) -> str:
    return " ".join(text.split())


def _short(text: str, limit: int = BULLET_MAX_CHARS) -> str:
    return shorten(text, limit)


def _prose(message: dict[str, Any], role: str) -> str:
    if role == "user":
        return _LEADING_META_RE.sub("", message_text(message), count=1)
    if role != "assistant":
        return ""
    blocks = [b for b in content_blocks(message) if isinstance(b, dict) and b.get("type") == "text"]
    return "\n".join(t for b in blocks if isinstance(t := b.get("text"), str) and t.strip())


def _views(messages: list[dict[str, Any]]) -> list[_View]:
    views: list[_View] = []
    for message in (m for m in messages if isinstance(m, dict)):
        role = role_of(message)
        prose = _prose(message, role)[:_SCAN_CHARS]
        name = message.get("toolName")
        views.append(
            _View(
                role=role,
                text=prose if role == "user" else message_text(message)[:_SCAN_CHARS],
                prose=prose,
                is_error=role == "toolResult" and message.get("isError") is True,
                tool_name=name if isinstance(name, str) else "",
            )
        )
    return views


class _Collector:
    """Bounded, de-duplicated items of one section, fresh against the prior body."""

    def __init__(self, prior_body: str, cap: int) -> None:
        self.prior_lower = prior_body.lower()
        self.cap = cap
        self.items: list[str] = []
        self.seen: set[str] = set()

    @property
    def full(self) -> bool:
        return len(self.items) >= self.cap

    def add(self, item: str, key: str | None = None) -> None:
        """Add ``item`` unless full, empty, already known (by ``key``) or already in the batch."""
        core = _short(key if key is not None else item).strip("_* `")
        if self.full or not core or not is_fresh(core, self.prior_lower):
            return
        if core.lower() in self.seen:
            return
        self.seen.add(core.lower())
        self.items.append(_short(item))

    def op(self) -> dict[str, Any]:
        return {"op": "APPEND", "items": list(self.items)} if self.items else {"op": "KEEP"}


def make_title(request: str) -> str:
    """A few meaningful words of a request: first line, leading filler dropped, ≤ 8 words."""
    lines = [
        ln for ln in _LEADING_META_RE.sub("", request or "", count=1).splitlines() if ln.strip()
    ]
    if not lines:
        return ""
    words = [w.strip(_EDGE_PUNCT) for w in lines[0].split()]
    words = [w for w in words if w]
    while len(words) > 1 and words[0].lower() in _TITLE_FILLER:
        words.pop(0)
    title = " ".join(words[:TITLE_MAX_WORDS]).rstrip(".,;:!?。！？")
    return _short(title, TITLE_MAX_CHARS)


def _is_question(sentence: str) -> bool:
    return sentence.endswith(("?", "？"))


def _is_ack(text: str) -> bool:
    return _flat(text).strip(".!?。！ ").lower() in _ACKS


def _key_facts(views: list[_View], collector: _Collector) -> None:
    scored: list[tuple[int, int, str]] = []
    for sentence in (s for v in views for s in split_sentences(v.prose) if not _is_question(s)):
        anchors = {m.group(0).lower() for p in ANCHOR_VALUE_PATTERNS for m in p.finditer(sentence)}
        if anchors:
            scored.append((-len(anchors), len(scored), sentence))
    # The most anchor-dense sentences win; they are then kept in conversation order.
    best = sorted(scored)[: collector.cap * 3]
    for _, _, sentence in sorted(best, key=lambda entry: entry[1]):
        collector.add(sentence)


def _display_path(token: str, match: str) -> str:
    cleaned = token.strip(_EDGE_PUNCT).rstrip(".")
    return cleaned if match in cleaned and len(cleaned) <= 160 else match


def _path_hits(text: str) -> list[tuple[str, str, str]]:
    hits: list[tuple[str, str, str]] = []
    for sentence in split_sentences(text):
        for token in sentence.split():
            if len(token) > _TOKEN_SCAN_CHARS or ("." not in token and "/" not in token):
                continue
            hits.extend(
                (m, _display_path(token, m), sentence) for m in WM_PATH_LIKE_RE.findall(token)
            )
    return hits


def _files(views: list[_View], collector: _Collector) -> None:
    # Paths the conversation names first, then those only seen in tool output.
    ordered = sorted(views, key=lambda v: v.role == "toolResult")
    for match, display, sentence in (h for v in ordered for h in _path_hits(v.text)):
        if collector.full:
            return
        if is_fresh(match, collector.prior_lower):
            context = _short(sentence, BULLET_MAX_CHARS - len(display) - 3)
            item = display if _flat(sentence) == display else f"{display} — {context}"
            collector.add(item, key=display)


def _failure_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    hits = [ln for ln in lines if _is_failure(ln)]
    return hits[0] if hits else (lines[0] if lines else "")


def _is_failure(line: str) -> bool:
    # A bare "Traceback (most recent call last):" says nothing; its last line does.
    return bool(_FAILURE_RE.search(line)) and not line.startswith("Traceback")


def _errors(views: list[_View], collector: _Collector) -> None:
    for view in views:
        if view.is_error and (line := _failure_line(view.text)):
            collector.add(f"{view.tool_name or 'tool'} error: {line}", key=line)
    # Then failure lines the conversation wrote, then those of successful tool output.
    said = [s for v in views for s in split_sentences(v.prose)]
    logged = [
        ln for v in views if v.role == "toolResult" and not v.is_error for ln in v.text.splitlines()
    ]
    for line in (ln.strip() for ln in said + logged):
        if collector.full:
            return
        if _is_failure(line):
            collector.add(line)


def _open_issues(views: list[_View], collector: _Collector) -> None:
    latest = views[-OPEN_ISSUES_WINDOW:]
    answers = [i for i, v in enumerate(latest) if v.role == "assistant" and v.prose]
    last_answer = answers[-1] if answers else -1
    user_after = any(v.role == "user" for v in latest[last_answer + 1 :])
    for index, view in enumerate(latest):
        for sentence in split_sentences(view.prose):
            if _is_question(sentence) and view.role == "user" and index > last_answer:
                collector.add(f"Unanswered: {sentence}", key=sentence)
            elif _is_question(sentence) and index == last_answer and not user_after:
                collector.add(f"Awaiting user: {sentence}", key=sentence)
            elif _TODO_RE.search(sentence):
                collector.add(sentence)


def _current_state(views: list[_View]) -> dict[str, Any]:
    users = [v.prose for v in views if v.role == "user" and v.prose.strip()]
    answers = [v.prose for v in views if v.role == "assistant" and v.prose.strip()]
    parts: list[str] = []
    if users:
        parts.append("Latest request: " + _short(users[-1], 280))
    if answers:
        gist = " ".join(split_sentences(answers[-1])[:2])
        parts.append("Latest answer: " + _short(gist, 280))
    if not parts:
        return {"op": "KEEP"}
    return {"op": "UPDATE", "content": "\n".join(parts)[:CURRENT_STATE_MAX_CHARS]}


def _title(
    views: list[_View], prior: dict[str, str], first_user_request: str | None
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
    views = _views(messages or [])
    prior = parse_wm_sections(prior_wm)
    collectors = {
        name: _Collector(prior.get(section_key(name), ""), cap)
        for name, cap in SECTION_CAPS.items()
    }
    goals = collectors["Task & Goals"]
    requests = [
        v.prose for v in views if v.role == "user" and v.prose.strip() and not _is_ack(v.prose)
    ]
    for request in requests[-goals.cap :]:
        goals.add(request)
    _key_facts(views, collectors["Key Facts & Decisions"])
    _files(views, collectors["Files & Context"])
    _errors(views, collectors["Errors & Corrections"])
    _open_issues(views, collectors["Open Issues"])
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
