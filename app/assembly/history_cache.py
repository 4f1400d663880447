"""The decoded stored history of recently assembled sessions, kept between pre-prompt assembles.

Every pre-prompt assemble rebuilds the prompt from the same stored messages until the session
changes: reading and decoding them again (hundreds of KB on a long session) was most of the
request. The store says when they change (``StoredContext.version``, read in the request's own
read transaction with the host's fingerprints), so a hit is exact, on every replica alike: a
replica whose copy is stale sees another version and reads the store again. Nothing here is ever
the only copy of anything. The version follows what the service writes: a stored message edited
in place by hand would show only once the session changes again (the service never does that;
an overview, which an import may rewrite, is read on every request).

Bounded by the characters of the stored bodies it holds (the decoded objects take about 3.5 times
as much memory); least recently used sessions go first. Entries are shared by concurrent requests
and never mutated: assembly returns new lists and copies a message before changing it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class HistoryCache(Generic[T]):
    """(tenant, session) → (version, value, size); thread-safe."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self._entries: OrderedDict[tuple[str, str], tuple[Hashable, T, int]] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[str, str], version: Hashable) -> T | None:
        """The value stored for exactly this version, else None."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] != version:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return entry[1]

    def put(self, key: tuple[str, str], version: Hashable, value: T, chars: int) -> None:
        """Keep ``value`` for ``version`` (replacing an older one); too large a value is not kept."""
        if chars > self.max_chars:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._chars -= old[2]
            self._entries[key] = (version, value, chars)
            self._chars += chars
            while self._chars > self.max_chars:
                _, (_, _, size) = self._entries.popitem(last=False)
                self._chars -= size

    @property
    def chars(self) -> int:
        return self._chars

    def __len__(self) -> int:
        return len(self._entries)
