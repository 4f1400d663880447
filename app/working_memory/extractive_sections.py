"""The per-section collectors of the extractive Working Memory builder.

Messages are read once into bounded views; each collector then picks the fresh, de-duplicated
bullets of one section (requests, anchored facts, paths, failures, open questions and to-dos).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from typing import Any

from app.core.rules.dates import host_time
from app.core.rules.messages import content_blocks, message_text, role_of
from app.search.text.query import speaker_label
from app.working_memory.document import shorten, split_sentences
from app.working_memory.fact_weight import MIN_FACT_WEIGHT, dated, fact_weight
from app.working_memory.guards import (
    PATH_TOKEN_MAX_CHARS,
    WM_PATH_LIKE_RE,
    is_fresh,
)

BULLET_MAX_CHARS = 240
OPEN_ISSUES_WINDOW = 20  # "from the latest messages"
# Per message, then per archive: bounds the work on huge pastes and tool outputs.
_SCAN_CHARS = 8_000
_ARCHIVE_SCAN_CHARS = 1_000_000

LEADING_META_RE = re.compile(r"^\s*\[[^\]\n]{1,80}\]\s*")
# Matched against lower-cased text: an IGNORECASE alternation is slower (bench/RESULTS.md,
# Measurements behind the code).
_FAILURE_RE = re.compile(
    r"error|fail|exception|traceback|crash|fatal|panic|wrong|incorrect|mistake"
    r"|失败|错误|报错|异常|出错"
)
_TODO_RE = re.compile(
    r"\b(?:todo|fixme|xxx|pending|follow[- ]?up|next steps?|not yet|still needs?|blocked|blocker"
    r"|unresolved|tbd)\b|待办|待处理|未解决|还需要|下一步"
)
# Bare acknowledgements are not requests.
_ACKS = frozenset("ok okay k thanks thx yes no sure continue 好 好的 继续 谢谢 嗯 对".split())
_ACKS |= {"thank you", "go ahead", "go on"}
_PATH_LEFT_RE = re.compile(r"[A-Za-z0-9_.:/\\~%+-]*$")
_PATH_RIGHT_RE = re.compile(r"[A-Za-z0-9_./\\~%+#?=&-]*")


@dataclass(frozen=True, slots=True)
class View:
    """What the collectors read of one message."""

    role: str
    text: str  # all prompt-visible text (tool calls included), bounded
    prose: str  # what the user/assistant actually wrote
    sentences: tuple[str, ...]  # of ``prose``
    is_error: bool
    tool_name: str
    said_on: date | None = None  # the day the host says the message was written


def _flat(text: str) -> str:
    return " ".join(text.split())


def _short(text: str, limit: int = BULLET_MAX_CHARS) -> str:
    return shorten(text, limit)


def _prose(message: dict[str, Any], role: str) -> str:
    if role == "user":
        return LEADING_META_RE.sub("", message_text(message), count=1)
    if role != "assistant":
        return ""
    blocks = [b for b in content_blocks(message) if isinstance(b, dict) and b.get("type") == "text"]
    return "\n".join(t for b in blocks if isinstance(t := b.get("text"), str) and t.strip())


def read_views(messages: list[dict[str, Any]]) -> list[View]:
    """The views of the dict messages, each bounded so that a whole archive stays cheap to scan."""
    views: list[View] = []
    dicts = [m for m in messages if isinstance(m, dict)]
    scan = min(_SCAN_CHARS, max(1_000, _ARCHIVE_SCAN_CHARS // max(1, len(dicts))))
    for message in dicts:
        role = role_of(message)
        prose = _prose(message, role)[:scan]
        name = message.get("toolName")
        moment = host_time(message.get("timestamp"))
        views.append(
            View(
                role=role,
                text=prose if role == "user" else message_text(message)[:scan],
                prose=prose,
                sentences=tuple(split_sentences(prose)),
                is_error=role == "toolResult" and message.get("isError") is True,
                tool_name=name if isinstance(name, str) else "",
                said_on=moment.date() if moment is not None else None,
            )
        )
    return views


class Collector:
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


def _is_question(sentence: str) -> bool:
    return sentence.endswith(("?", "？"))


def _is_ack(text: str) -> bool:
    return _flat(text).strip(".!?。！ ").lower() in _ACKS


def collect_goals(
    views: list[View], collector: Collector, facts: frozenset[str] = frozenset()
) -> None:
    """The latest requests of the user, bare acknowledgements and statements whose first sentence
    is kept as a Key Fact (``facts``, as collect_key_facts returns them) left out."""
    requests = [
        v.prose
        for v in views
        if v.role == "user"
        and v.prose.strip()
        and not _is_ack(v.prose)
        and not (v.sentences and v.sentences[0] in facts)
    ]
    for request in requests[-collector.cap :]:
        collector.add(request)


def collect_key_facts(views: list[View], collector: Collector) -> frozenset[str]:
    """The fact-bearing statements of the conversation (``fact_weight``), the weightiest first,
    then kept in conversation order; each says the day it was said, its relative dates resolved,
    and who said it when the message names its speaker. Returns the sentences kept, as written."""
    scored: list[tuple[float, int, str, str]] = []
    for view in views:
        if view.role not in ("user", "assistant"):
            continue
        label = speaker_label(view.prose).strip()
        for index, sentence in enumerate(s for s in view.sentences if not _is_question(s)):
            weight = fact_weight(sentence)
            if weight >= MIN_FACT_WEIGHT:
                said = sentence if index == 0 or not label else f"{label} {sentence}"
                scored.append((-weight, len(scored), dated(said, view.said_on), sentence))
    best = sorted(scored)[: collector.cap * 3]
    kept: set[str] = set()
    for _, _, item, sentence in sorted(best, key=lambda entry: entry[1]):
        before = len(collector.items)
        collector.add(item)
        if len(collector.items) > before:
            kept.add(sentence)
    return frozenset(kept)


def _display_path(token: str, match: re.Match[str]) -> str:
    # The guard's pattern stops short of "App.tsx" or "https://…/x.png"; show the whole path.
    left = _PATH_LEFT_RE.search(token, 0, match.start())
    right = _PATH_RIGHT_RE.match(token, match.end())
    full = (left.group(0) if left else "") + match.group(0) + (right.group(0) if right else "")
    return full.rstrip(".:?&#") if len(full) <= 160 else match.group(0)


def _path_hits(text: str, scanned: set[str]) -> Iterator[tuple[str, str, str]]:
    for line in text.splitlines():
        for token in line.split():
            if len(token) > PATH_TOKEN_MAX_CHARS or ("." not in token and "/" not in token):
                continue
            if token in scanned:
                continue  # logs repeat paths; the first line that mentions one is kept
            scanned.add(token)
            for match in WM_PATH_LIKE_RE.finditer(token):
                yield match.group(0), _display_path(token, match), line


def collect_files(views: list[View], collector: Collector) -> None:
    """Paths, each with the sentence that mentions it."""
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


def collect_errors(views: list[View], collector: Collector) -> None:
    """Failed tool calls first, then failure lines said or logged."""
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


def collect_open_issues(views: list[View], collector: Collector) -> None:
    """Unanswered questions and to-dos of the latest messages."""
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
