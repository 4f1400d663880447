"""Recall's answers kept for the rest of a turn (docs/recall.md, Recall cache).

The host asks for recall before every model call of a tool loop, with the same prompt each time.
An answer is kept under everything that shapes it (tenant, user, agent, query, cron or not, the
request's options) together with the memory generations of its two owners read before it was
computed, and served again only while both generations are unchanged and the entry is younger
than the time to live. A generation moves on in the transaction of any change to the owner's
memories (database triggers), so a kept answer never hides a written, edited or deleted memory;
the time to live bounds what a generation cannot see: the clock (a memory's expiry, the decay of
dated memories). Pure: the caller reads the generations and the clock.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass

from app.core.recall import RecallBlock, RecallRequest

MAX_ENTRIES = 1024

Key = tuple[str, str, str, str, bool, str]
Generations = tuple[int, ...]


def recall_key(request: RecallRequest) -> Key:
    """Everything of the request that shapes its answer."""
    options = json.dumps(request.options, sort_keys=True, default=str)
    return (
        request.tenant_id,
        request.user_id,
        request.agent_id,
        request.query,
        request.is_cron,
        options,
    )


@dataclass(frozen=True, slots=True)
class _Entry:
    generations: Generations
    stored_at: float
    block: RecallBlock | None


class RecallCache:
    """Answers by key, least recently used dropped past ``max_entries``."""

    def __init__(self, ttl_s: float, max_entries: int = MAX_ENTRIES) -> None:
        self.ttl_s = ttl_s
        self._max_entries = max_entries
        self._entries: OrderedDict[Key, _Entry] = OrderedDict()

    def get(
        self, key: Key, generations: Generations, now: float
    ) -> tuple[bool, RecallBlock | None]:
        """(found, answer): found only while the generations match and the entry is fresh."""
        entry = self._entries.get(key)
        if entry is None:
            return False, None
        if entry.generations != generations or now - entry.stored_at >= self.ttl_s:
            del self._entries[key]
            return False, None
        self._entries.move_to_end(key)
        return True, entry.block

    def put(
        self, key: Key, generations: Generations, now: float, block: RecallBlock | None
    ) -> None:
        self._entries[key] = _Entry(generations, now, block)
        self._entries.move_to_end(key)
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)
