"""Pre-prompt reconciliation: capture what the host's history holds and the store does not.

A turn whose commit never reached the service (it was down, the host gave up retrying) is still
in the host's history on the next turn. Storing it there, once and in order, keeps the service
lossless; everything later (summary, search, archives) then sees it like any other turn.

The store can only be behind the host at the end of its history, so the scan walks back from the
newest message and stops after a run of messages the store already holds. This keeps the request
cheap on long histories (a few dozen fingerprints and one small lookup, not the whole history),
and never re-adds messages deliberately not stored from deep in it. Heartbeat turns (a user
message whose provenance says the heartbeat tool sent it, and the answer to it) are never
captured, as at commit.

For the same reason a client may send only the newest messages of a long history and say how many
it left out: the scan needs no more when it ends inside them. When it does not (the store is
further behind than the messages sent), nothing is stored and ``HostHistoryNeeded`` asks for the
whole history, so a turn is never captured out of order or without the ones before it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

from app.core.rules.fingerprint import message_fingerprint
from app.core.rules.messages import Message, role_of
from app.core.rules.sanitize import is_conversation_message, sanitize_message_for_capture
from app.db.uow import UnitOfWork
from app.sessions.capture import TurnInput, capture_turn
from app.sessions.history import (
    HeldVersion,
    HistorySnapshot,
    StoredContext,
    fingerprint_counts,
    history_snapshot,
    stored_context,
)
from app.sessions.identity import SessionIdentity
from app.settings import Settings

# Reconciliation stops after this many consecutive host messages that the store already holds.
KNOWN_RUN_TO_STOP = 16
# The first batch is small: a host that is in step with the store (the common case) is confirmed by
# its newest messages alone, and fingerprinting a message costs more than a lookup. Later batches,
# for a store that is behind, are larger.
FIRST_SCAN_BATCH = KNOWN_RUN_TO_STOP + 8
SCAN_BATCH = 64


class HostHistoryNeeded(Exception):
    """The host's newest messages, all that were sent, do not show where the store's history
    ends: the whole history is needed to reconcile."""


def reconcile_and_read(
    uow: UnitOfWork,
    settings: Settings,
    ident: SessionIdentity,
    messages: list[Any],
    omitted: int = 0,
    held: HeldVersion | None = None,
) -> tuple[int, StoredContext | None]:
    """Store the host messages the session lacks, then read what it holds: (how many were stored,
    the stored context, None for an unknown session). A host in step with the store costs one
    read transaction: the lookup of its newest messages and the stored context are read together.
    ``omitted``: how many older host messages were left out of ``messages``; raises
    HostHistoryNeeded when the scan would have to go on into them. ``held``: see StoredContext."""
    newest_first = _host_fingerprints(reversed(messages))
    first = list(islice(newest_first, FIRST_SCAN_BATCH))
    snapshot = history_snapshot(
        uow, ident.tenant_id, ident.session_id, [fingerprint for _, fingerprint in first], held
    )
    if snapshot is None:
        return 0, None
    found, confirmed = _unstored_host_messages(uow, snapshot, first, newest_first)
    if omitted > 0 and not confirmed:
        raise HostHistoryNeeded
    unstored = _without_heartbeat_turns(found)
    if not unstored:
        return 0, snapshot.context
    ingested = capture_turn(uow, settings, TurnInput(identity=ident, messages=unstored)).ingested
    return ingested, stored_context(uow, ident.tenant_id, ident.session_id, held)


def _unstored_host_messages(
    uow: UnitOfWork,
    snapshot: HistorySnapshot,
    first: list[tuple[Message, str]],
    rest: Iterator[tuple[Message, str]],
) -> tuple[list[Message], bool]:
    """Host messages not stored yet, in the host's order (docs/lifecycle.md, pre_prompt step 3),
    and whether the scan stopped on a run of stored ones (rather than at the oldest message).
    ``first`` and then ``rest`` are the host's messages newest first; the snapshot counts those
    of ``first``, and each later batch is looked up on its own."""
    counts = dict(snapshot.counts)
    seen: dict[str, int] = {}
    unstored: list[Message] = []
    known_run = 0
    batch = first
    while batch:
        for clean, fingerprint in batch:
            seen[fingerprint] = seen.get(fingerprint, 0) + 1
            if seen[fingerprint] > counts.get(fingerprint, 0):
                known_run = 0
                unstored.append(clean)
                continue
            known_run += 1
            if known_run >= KNOWN_RUN_TO_STOP:
                return unstored[::-1], True
        batch = list(islice(rest, SCAN_BATCH))
        if batch:
            looked_up = [fingerprint for _, fingerprint in batch]
            counts.update(fingerprint_counts(uow, snapshot.keys, looked_up))
    return unstored[::-1], False


def _host_fingerprints(messages: Iterable[Any]) -> Iterator[tuple[Message, str]]:
    """The host's messages as capture would store them, with their fingerprints (lazily)."""
    for message in messages:
        if not is_conversation_message(message):
            continue
        clean = sanitize_message_for_capture(message)
        if clean is not None:
            yield clean, message_fingerprint(clean)


def is_heartbeat_prompt(message: Message) -> bool:
    provenance = message.get("provenance")
    return (
        role_of(message) == "user"
        and isinstance(provenance, dict)
        and provenance.get("sourceTool") == "heartbeat"
    )


def _without_heartbeat_turns(messages: list[Message]) -> list[Message]:
    """Drop each heartbeat prompt and the messages answering it (up to the next user message)."""
    kept: list[Message] = []
    in_heartbeat = False
    for message in messages:
        if role_of(message) == "user":
            in_heartbeat = is_heartbeat_prompt(message)
        if not in_heartbeat:
            kept.append(message)
    return kept
