"""Deterministic Working Memory builder for when no LLM is configured.

working-memory.md "Without an LLM": the archive's messages become per-section ops that are merged
into the prior WM through the same guards as any model answer, so the guards bound growth.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
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
# Per message, then per archive: bounds the work on huge pastes and tool outputs.
_SCAN_CHARS = 8_000
_ARCHIVE_SCAN_CHARS = 1_000_000
_TOKEN_SCAN_CHARS = 256  # the path regex backtracks; long blobs are not paths

# The guard's value anchors (dates, numbers with units, money, decisions) in one pass over
# lower-cased text; their patterns hold no upper-case escapes, so lowering them is safe.
_ANY_ANCHOR_RE = re.compile("|".join(p.pattern for p in ANCHOR_VALUE_PATTERNS).lower())
_LEADING_META_RE = re.compile(r"^\s*\[[^\]\n]{1,80}\]\s*")
# Matched against lower-cased text: an IGNORECASE alternation is several times slower.
_FAILURE_RE = re.compile(
    r"error|fail|exception|traceback|crash|fatal|panic|wrong|incorrect|mistake"
    r"|失败|错误|报错|异常|出错"
)
_TODO_RE = re.compile(
    r"\b(?:todo|fixme|xxx|pending|follow[- ]?up|next steps?|not yet|still needs?|blocked|blocker"
    r"|unresolved|tbd)\b|待办|待处理|未解决|还需要|下一步"
)
_TITLE_FILLER = frozenset(
    "please pls can could would will you help me i we want need to let's lets hi hello hey".split()
)
# Bare acknowledgements are not requests.
_ACKS = frozenset("ok okay k thanks thx yes no sure continue 好 好的 继续 谢谢 嗯 对".split())
_ACKS |= {"thank you", "go ahead", "go on"}
_EDGE_PUNCT = "\"'`()[]{}<>,;:!?。，、；：！？（）【】「」《》“”‘’"
_PATH_LEFT_RE = re.compile(r"[A-Za-z0-9_.:/\\~%+-]*$")
_PATH_RIGHT_RE = re.compile(r"[A-Za-z0-9_./\\~%+#?=&-]*")


@dataclass(frozen=True, slots=True)
class _View:
    role: str
    text: str  # all prompt-visible text (tool calls included), bounded
    prose: str  # what the user/assistant actually wrote
    sentences: tuple[str, ...]  # of ``prose``
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
    dicts = [m for m in messages if isinstance(m, dict)]
    scan = min(_SCAN_CHARS, max(1_000, _ARCHIVE_SCAN_CHARS // max(1, len(dicts))))
    for message in dicts:
        role = role_of(message)
        prose = _prose(message, role)[:scan]
        name = message.get("toolName")
        views.append(
            _View(
                role=role,
                text=prose if role == "user" else message_text(message)[:scan],
                prose=prose,
                sentences=tuple(split_sentences(prose)),
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
        self.tried: set[str] = set()

    @property
    def full(self) -> bool:
        return len(self.items) >= self.cap

    def add(self, item: str, key: str | None = None) -> None:
        """Add ``item`` unless full, empty, already known (by ``key``) or already in the batch."""
        if self.full or item in self.tried:
            return
        self.tried.add(item)
        core = _short(key if key is not None else item).strip("_* `")
        if not core or core.lower() in self.seen or not is_fresh(core, self.prior_lower):
            return
        self.seen.add(core.lower())
        self.items.append(_short(item))

    def op(self) -> dict[str, Any]:
        return {"op": "APPEND", "items": list(self.items)} if self.items else {"op": "KEEP"}


def make_title(request: str) -> str:
    """A few meaningful words of a request: first sentence, leading filler dropped, ≤ 8 words."""
    sentences = split_sentences(_LEADING_META_RE.sub("", request or "", count=1))
    if not sentences:
        return ""
    words = [w for w in (w.strip(_EDGE_PUNCT) for w in sentences[0].split()) if w]
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
    for view in (v for v in views if _ANY_ANCHOR_RE.search(v.prose.lower())):
        for sentence in (s for s in view.sentences if not _is_question(s)):
            anchors = set(_ANY_ANCHOR_RE.findall(sentence.lower()))
            if anchors:
                scored.append((-len(anchors), len(scored), sentence))
    # The most anchor-dense sentences win; they are then kept in conversation order.
    best = sorted(scored)[: collector.cap * 3]
    for _, _, sentence in sorted(best, key=lambda entry: entry[1]):
        collector.add(sentence)


def _display_path(token: str, match: re.Match[str]) -> str:
    # The guard's pattern stops short of "App.tsx" or "https://…/x.png"; show the whole path.
    left = _PATH_LEFT_RE.search(token, 0, match.start())
    right = _PATH_RIGHT_RE.match(token, match.end())
    full = (left.group(0) if left else "") + match.group(0) + (right.group(0) if right else "")
    return full.rstrip(".:?&#") if len(full) <= 160 else match.group(0)


def _path_hits(text: str, scanned: set[str]) -> Iterator[tuple[str, str, str]]:
    for line in text.splitlines():
        for token in line.split():
            if len(token) > _TOKEN_SCAN_CHARS or ("." not in token and "/" not in token):
                continue
            if token in scanned:
                continue  # logs repeat paths; the first line that mentions one is kept
            scanned.add(token)
            for match in WM_PATH_LIKE_RE.finditer(token):
                yield match.group(0), _display_path(token, match), line


def _files(views: list[_View], collector: _Collector) -> None:
    # Paths the conversation names first, then those only seen in tool output.
    ordered = sorted(views, key=lambda v: v.role == "toolResult")
    scanned: set[str] = set()
    for match, display, line in (h for v in ordered for h in _path_hits(v.text, scanned)):
        if collector.full:
            return
        if display.lower() in collector.seen or not is_fresh(match, collector.prior_lower):
            continue
        sentence = next((s for s in split_sentences(line) if display in s), line)
        context = _short(sentence, BULLET_MAX_CHARS - len(display) - 3)
        item = display if _flat(sentence) == display else f"{display} — {context}"
        collector.add(item, key=display)


def _failure_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    hits = [ln for ln in lines if _is_failure(ln)]
    return hits[0] if hits else (lines[0] if lines else "")


def _is_failure(line: str) -> bool:
    # A bare "Traceback (most recent call last):" says nothing; its last line does.
    return bool(_FAILURE_RE.search(line.lower())) and not line.startswith("Traceback")


def _errors(views: list[_View], collector: _Collector) -> None:
    for view in views:
        if view.is_error and (line := _failure_line(view.text)):
            collector.add(f"{view.tool_name or 'tool'} error: {line}", key=line)
    # Then failure lines the conversation wrote, then those of successful tool output.
    said = [v.sentences for v in views if _FAILURE_RE.search(v.prose.lower())]
    logged = [
        v.text.splitlines()
        for v in views
        if v.role == "toolResult" and not v.is_error and _FAILURE_RE.search(v.text.lower())
    ]
    checked: set[str] = set()
    for line in (ln.strip() for lines in said + logged for ln in lines):
        if collector.full:
            return
        if line and line not in checked and _is_failure(line):
            collector.add(line)
        checked.add(line)


def _open_issues(views: list[_View], collector: _Collector) -> None:
    latest = views[-OPEN_ISSUES_WINDOW:]
    answers = [i for i, v in enumerate(latest) if v.role == "assistant" and v.prose]
    last_answer = answers[-1] if answers else -1
    user_after = any(v.role == "user" for v in latest[last_answer + 1 :])
    for index, view in enumerate(latest):
        for sentence in view.sentences:
            if _is_question(sentence) and view.role == "user" and index > last_answer:
                collector.add(f"Unanswered: {sentence}", key=sentence)
            elif _is_question(sentence) and index == last_answer and not user_after:
                collector.add(f"Awaiting user: {sentence}", key=sentence)
            elif _TODO_RE.search(sentence.lower()):
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
