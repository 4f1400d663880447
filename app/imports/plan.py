"""Which messages of a transcript session are new to the service, and the batches to store them
in. Pure: fingerprints as capture computes them, counted against what the session stores."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.core.rules.fingerprint import message_fingerprint
from app.core.rules.messages import role_of
from app.core.rules.sanitize import is_conversation_message, sanitize_message_for_capture
from app.imports.records import HostMessage


@dataclass(frozen=True, slots=True)
class Plan:
    first_new: int | None  # index of the first message not stored yet; None: all are stored
    new: int  # messages to store
    reordering: bool  # a stored message follows a new one: appending would change the order


def fingerprints(messages: Sequence[HostMessage]) -> list[str | None]:
    """Each message's fingerprint as capture computes it; None for one capture never stores."""
    out: list[str | None] = []
    for item in messages:
        message = item.message
        clean = sanitize_message_for_capture(message) if is_conversation_message(message) else None
        out.append(message_fingerprint(clean) if clean is not None else None)
    return out


def plan(fps: Sequence[str | None], stored: Mapping[str, int]) -> Plan:
    """Occurrence-aware, as capture is: the n-th copy of a fingerprint is new past its stored count."""
    seen: dict[str, int] = {}
    first_new: int | None = None
    new = 0
    reordering = False
    for index, fp in enumerate(fps):
        if fp is None:
            continue
        seen[fp] = seen.get(fp, 0) + 1
        if seen[fp] > stored.get(fp, 0):
            new += 1
            first_new = index if first_new is None else first_new
        elif first_new is not None:
            reordering = True
    return Plan(first_new, new, reordering)


def without_heartbeats(messages: list[HostMessage]) -> tuple[list[HostMessage], int]:
    """The messages less every heartbeat turn (the hooks store none), and how many were dropped."""
    kept: list[HostMessage] = []
    dropping = False
    for item in messages:
        if role_of(item.message) == "user":
            dropping = item.heartbeat
        if not dropping:
            kept.append(item)
    return kept, len(messages) - len(kept)


def batches(messages: Sequence[HostMessage], size: int) -> list[tuple[int, int]]:
    """``[start, end)`` ranges of at most ``size`` messages (more only for one longer turn), each
    starting at a user message where it can: a batch is stored as one turn of the hooks."""
    bounds: list[tuple[int, int]] = []
    start = 0
    last_turn = 0
    for index, item in enumerate(messages):
        if role_of(item.message) == "user":
            last_turn = index
        if index - start + 1 > size:
            cut = last_turn if last_turn > start else index
            bounds.append((start, cut))
            start = cut
    if start < len(messages):
        bounds.append((start, len(messages)))
    return bounds
