"""Memory extraction: candidate memories from a conversation, and what each does to the store.

docs/recall.md "Writing memories": one forced tool call proposes candidates; for each candidate with
similar existing memories a second call decides ADD / UPDATE / DELETE / NONE; without a model an
exact or near-exact duplicate is NONE. Experiences follow docs/peers.md, OpenViking §6.3. No database access:
the caller passes the existing memories in and persists the decisions.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from app.core.rules.dates import resolve_relative_date
from app.memory.learning.arguments import tool_arguments
from app.memory.learning.experience import normalise_experience, strip_bullet
from app.memory.learning.extraction_prompts import (
    DECIDE_TOOL,
    DECIDE_TOOL_NAME,
    PROPOSE_TOOL,
    PROPOSE_TOOL_NAME,
    decision_messages,
    extraction_messages,
    numbered_transcript,
)
from app.memory.records import CATEGORIES, SENSITIVITIES
from app.memory.store.content_key import normalise_text
from app.providers.protocols import ChatModel, ChatResult

DEFAULT_CONFIDENCE = 0.5
TITLE_MAX_CHARS = 120
ABSTRACT_MAX_CHARS = 300

Action = Literal["ADD", "UPDATE", "DELETE", "NONE"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A memory proposed by extraction, not yet stored."""

    category: str
    title: str
    abstract: str
    content: str
    confidence: float = DEFAULT_CONFIDENCE
    sensitivity: str = "allowed"
    observed_at: str | None = None
    source_seqs: list[int] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Decision:
    """What a candidate does to the store; DELETE means the target is superseded by the candidate."""

    action: Action
    candidate: Candidate
    target_id: str | None
    merged_content: str | None
    reason: str


# --- the two model calls ---


async def extract_candidates(
    model: ChatModel,
    messages: list[dict[str, Any]],
    working_memory: str,
    *,
    message_time: str,
    user_id: str,
    agent_id: str,
) -> tuple[list[Candidate], dict[str, int]]:
    """Candidates from one forced ``propose_memories`` call; never-store ones are dropped."""
    usage = _new_usage()
    if not messages and not working_memory.strip():
        return [], usage
    transcript, seqs = numbered_transcript(messages)
    prompt = extraction_messages(
        transcript, working_memory, message_time=message_time, user_id=user_id, agent_id=agent_id
    )
    result = _count(usage, await model.complete_with_forced_tool(prompt, PROPOSE_TOOL))
    candidates: list[Candidate] = []
    seen: set[tuple[str, str]] = set()
    for item in _candidate_items(tool_arguments(result, PROPOSE_TOOL_NAME)):
        candidate = _candidate(item, message_time, set(seqs))
        if candidate is None or candidate.sensitivity == "never-store":
            continue
        key = (candidate.category, normalise_text(candidate.content))
        if key not in seen:
            seen.add(key)
            candidates.append(candidate)
    return candidates, usage


async def decide(
    model: ChatModel, candidate: Candidate, neighbours: list[dict[str, Any]]
) -> tuple[Decision, dict[str, int]]:
    """ADD without a call when nothing is similar; otherwise one forced ``decide_memory`` call."""
    usage = _new_usage()
    if not neighbours:
        return Decision("ADD", candidate, None, None, "no similar memory exists"), usage
    view = {
        k: getattr(candidate, k)
        for k in ("category", "title", "abstract", "content", "observed_at")
    }
    prompt = decision_messages(view, neighbours)
    result = _count(usage, await model.complete_with_forced_tool(prompt, DECIDE_TOOL))
    decision = _model_decision(tool_arguments(result, DECIDE_TOOL_NAME), candidate, neighbours)
    return decision or _safe_default(candidate, neighbours, "invalid model decision"), usage


def _model_decision(
    args: Any, candidate: Candidate, neighbours: list[dict[str, Any]]
) -> Decision | None:
    if not isinstance(args, dict):
        return None
    action = str(args.get("action") or args.get("decision") or "").strip().upper()
    ids = {_id(n) for n in neighbours} - {None}
    target = str(args.get("target_id") or "").strip() or None
    reason = _one_line(args.get("reason"), ABSTRACT_MAX_CHARS) or action.lower()
    if action == "ADD":
        return Decision("ADD", candidate, None, None, reason)
    if action == "NONE":
        return Decision("NONE", candidate, target if target in ids else None, None, reason)
    if target not in ids:
        return None
    if action == "DELETE":
        return Decision("DELETE", candidate, target, None, reason)
    merged = _content(candidate.category, args.get("merged_content"), candidate.abstract)
    return (
        Decision("UPDATE", candidate, target, merged, reason)
        if action == "UPDATE" and merged
        else None
    )


def _safe_default(candidate: Candidate, neighbours: list[dict[str, Any]], reason: str) -> Decision:
    twin = _exact_twin(candidate, neighbours)
    if twin is not None:
        return Decision("NONE", candidate, twin, None, f"{reason}; same text as an existing memory")
    return Decision("ADD", candidate, None, None, reason)


def _exact_twin(candidate: Candidate, neighbours: list[dict[str, Any]]) -> str | None:
    text = normalise_text(candidate.content)
    return next(
        (_id(n) for n in neighbours if text and normalise_text(n.get("content")) == text), None
    )


def _id(neighbour: dict[str, Any]) -> str | None:
    value = neighbour.get("id")
    return None if value is None else str(value)


def _new_usage() -> dict[str, int]:
    return {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "calls": 0}


def _count(usage: dict[str, int], result: ChatResult) -> ChatResult:
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        usage[key] += int(result.usage.get(key, 0) or 0)
    usage["calls"] += 1
    return result


# --- candidates ---


def _candidate_items(args: Any) -> list[Any]:
    if isinstance(args, list):
        return args
    if isinstance(args, dict):
        for key in ("memories", "candidates", "items"):
            if isinstance(items := args.get(key), list):
                return items
        if "category" in args:
            return [args]
    return []


def _candidate(item: Any, message_time: str, known_seqs: set[int]) -> Candidate | None:
    """A valid candidate from one proposed item, or None."""
    if not isinstance(item, dict) or (category := _category(item.get("category"))) is None:
        return None
    title = _one_line(item.get("title") or item.get("name"), TITLE_MAX_CHARS)
    abstract = _one_line(item.get("abstract") or item.get("summary"), ABSTRACT_MAX_CHARS)
    content = _content(category, item.get("content"), abstract or title)
    if content is None and category != "experiences":
        content = abstract
    if not content:
        return None
    abstract = abstract or _one_line(_first_line(content), ABSTRACT_MAX_CHARS)
    title = title or _one_line(abstract, TITLE_MAX_CHARS)
    return Candidate(
        category=category,
        title=title,
        abstract=abstract,
        content=content,
        confidence=_confidence(item.get("confidence")),
        sensitivity=_sensitivity(item.get("sensitivity")),
        observed_at=_observed_at(item.get("observed_at"), message_time),
        source_seqs=_seqs(item.get("source_seqs"), known_seqs),
    )


def _content(category: str, value: Any, situation_hint: str) -> str | None:
    if category == "experiences":
        return normalise_experience(value, situation_hint)
    return value.strip() if isinstance(value, str) and value.strip() else None


def _category(value: Any) -> str | None:
    text = str(value or "").strip().lower()
    plural = {
        "preference": "preferences",
        "entity": "entities",
        "event": "events",
        "case": "cases",
        "experience": "experiences",
        "skill": "skills",
        "tool": "tools",
    }
    text = plural.get(text, text)
    return text if text in CATEGORIES else None


def _sensitivity(value: Any) -> str:
    text = re.sub(r"[\s_]+", "-", str(value or "").strip().lower())
    if text in ("", "allowed", "allow", "low", "none", "normal", "public"):
        return "allowed"
    if text.startswith("never") or text in ("secret", "do-not-store", "forbidden"):
        return "never-store"
    return "masked" if text not in SENSITIVITIES else text


def _confidence(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return DEFAULT_CONFIDENCE
    return DEFAULT_CONFIDENCE if math.isnan(number) else min(1.0, max(0.0, number))


def _seqs(value: Any, known: set[int]) -> list[int]:
    values = value if isinstance(value, list) else [value]
    seqs = {
        int(v)
        for v in values
        if isinstance(v, int | str) and not isinstance(v, bool) and str(v).strip().isdigit()
    }
    return sorted(seqs & known if known else seqs)


def _observed_at(value: Any, message_time: str) -> str | None:
    """An ISO date from an absolute date (any separators) or a relative expression."""
    text = str(value or "").strip()
    if match := re.match(r"^(\d{4})\D(\d{1,2})\D(\d{1,2})", text):
        try:
            return date(*(int(g) for g in match.groups())).isoformat()
        except ValueError:
            return None
    return resolve_relative_date(text, message_time) if text else None


def _one_line(value: Any, limit: int) -> str:
    text = " ".join(str(value).split()) if isinstance(value, str | int | float) else ""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _first_line(content: str) -> str:
    lines = (
        strip_bullet(line) for line in content.splitlines() if not line.lstrip().startswith("#")
    )
    return next((line for line in lines if line), "")


__all__ = [
    "Candidate",
    "Decision",
    "decide",
    "extract_candidates",
    "normalise_experience",
    "normalise_text",
    "resolve_relative_date",
]
