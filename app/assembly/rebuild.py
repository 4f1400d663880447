"""The pre-prompt history rebuild from what the store holds (docs/lifecycle.md, pre_prompt
steps 2, 4 and 5): the decoded stored history, and its fit to a token budget. Pure: the stored
rows come in, messages go out.

A fit depends on the stored history, its overview and the budget only; a history kept between
requests (app/assembly/history_cache.py) keeps its last fits too, so a host that assembles an
unchanged session with the same budget gets the same list without the work.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from app.assembly.budget import message_budget, reserved_tokens
from app.assembly.guide import SESSION_CONTEXT_GUIDE, archive_index_line
from app.assembly.provider_validity import make_provider_valid
from app.assembly.result import estimate
from app.assembly.steps import fit_steps_to_budget
from app.assembly.timestamps import summary_timestamp, with_timestamps
from app.core.canonical_json import decode_many
from app.core.rules.messages import Message, message_tokens
from app.core.rules.redaction import redact_text
from app.core.rules.sanitize import is_conversation_message
from app.core.rules.tokens import estimate_text_tokens
from app.db.models import ArchiveStatus
from app.sessions.history import StoredContext

SUMMARY_PREFIX = "[Session History Summary]\n"
# Fits kept per stored history (a host sends one budget, two when its window changes).
FITS_KEPT = 4


@dataclass(frozen=True, slots=True)
class FittedHistory:
    """The messages to send for one budget, their estimate, and what the diagnostics report."""

    messages: list[Message]
    tokens: int
    guide: str
    overview_included: bool
    overview_dropped: bool
    dropped: int


@dataclass(slots=True)
class StoredHistory:
    """A session's stored context, decoded, shared between requests: nothing in it changes once
    built except ``fits``, a memo that only gains entries (or is cleared)."""

    overview: str = ""
    messages: list[Message] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    archives: dict[str, Any] = field(default_factory=dict)
    known: bool = False
    # (archive id, message count) of the archives the summary stands for, oldest first.
    summarised: list[tuple[str, int]] = field(default_factory=list)
    # (budget, overview) → fit; shared by the copies that carry another overview (see fitted).
    fits: dict[tuple[int, str], FittedHistory] = field(default_factory=dict)


def stored_history(context: StoredContext | None) -> StoredHistory:
    """Overview of the newest completed archive + later unsummarised archives + live messages."""
    if context is None:
        return StoredHistory()
    archives, latest, rows = context.archives, context.latest_completed, context.rows
    if rows is None:
        raise RuntimeError("the stored history was not read")  # only a cache hit skips it
    floor = latest.archive_index if latest else 0
    statuses = [a.status for a in archives]
    # Host bookkeeping stored by earlier releases is never shown to the model.
    bodies = decode_many([row.body for row in rows])
    loaded = [
        (message, row.tokens)
        for message, row in zip(bodies, rows, strict=True)
        if is_conversation_message(message)
    ]
    return StoredHistory(
        overview=context.overview,  # redacted with the summary text (_summary_content)
        messages=[message for message, _ in loaded],  # redacted bodies (see StoredMessage)
        tokens=[tokens for _, tokens in loaded],
        archives={
            "total": len(archives),
            "completed": statuses.count(ArchiveStatus.COMPLETED),
            "pending": statuses.count(ArchiveStatus.PENDING)
            + statuses.count(ArchiveStatus.RUNNING),
            "failed": statuses.count(ArchiveStatus.FAILED),
        },
        known=True,
        summarised=[(a.archive_id, a.message_count) for a in archives if a.archive_index <= floor],
    )


def fitted(stored: StoredHistory, budget: int) -> FittedHistory:
    """The fit of ``stored`` to ``budget``, computed once per (budget, overview)."""
    key = (budget, stored.overview)
    fit = stored.fits.get(key)
    if fit is None:
        fit = fit_history(stored, budget)
        if len(stored.fits) >= FITS_KEPT:
            stored.fits.clear()
        stored.fits[key] = fit  # one assignment: safe beside concurrent readers
    return fit


def fit_history(stored: StoredHistory, budget: int) -> FittedHistory:
    """Summary first, then the newest whole steps that fit, made valid for providers."""
    candidates = stored.messages
    # The guide is in every answer of the session, summary or not, so that the system prompt
    # (and a provider's cache of it) stays the same from the first turn to the last.
    guide = SESSION_CONTEXT_GUIDE
    summary, overview_tokens = _summary_message(stored.overview, candidates, stored.summarised)
    guide_tokens = estimate_text_tokens(guide)
    overview_dropped = bool(summary) and overview_tokens + guide_tokens > budget - reserved_tokens(
        budget
    )
    if overview_dropped:
        summary, overview_tokens = None, 0
    costs = stored.tokens
    kept, dropped = fit_steps_to_budget(
        candidates, costs, message_budget(budget, guide_tokens, overview_tokens)
    )
    assembled = ([summary] if summary else []) + [candidates[i] for i in kept]
    output = with_timestamps(make_provider_valid(assembled))
    known = dict(zip(map(id, candidates), costs, strict=True))
    if summary:
        known[id(summary)] = overview_tokens
    return FittedHistory(
        messages=output,
        tokens=estimate(output, known) + guide_tokens,
        guide=guide,
        overview_included=summary is not None,
        overview_dropped=overview_dropped,
        dropped=dropped,
    )


def _summary_message(
    overview: str, after: list[Message], archives: list[tuple[str, int]]
) -> tuple[Message | None, int]:
    """The Working Memory as the first user message, dated with the messages it precedes, with
    the ids of the archives behind it (the model needs them to read originals back); its tokens."""
    if not overview:
        return None, 0
    text, tokens = _summary_content(overview, archive_index_line(archives))
    return {"role": "user", "content": text, "timestamp": summary_timestamp(after)}, tokens


@functools.lru_cache(maxsize=64)
def _summary_content(overview: str, index_line: str) -> tuple[str, int]:
    """The summary's text, redacted, and its tokens. Remembered for the latest overviews: a
    session's overview changes once per commit, but is read on every assemble, and redacting and
    weighing it is not free (bench/RESULTS.md). A pure function of its arguments."""
    text = SUMMARY_PREFIX + redact_text(overview).rstrip("\n") + index_line
    return text, message_tokens({"role": "user", "content": text})
