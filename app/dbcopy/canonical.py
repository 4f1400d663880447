"""The canonical text of a row, the same on SQLite and PostgreSQL for the same values.

The drivers hand back different Python types for the same stored value: SQLite has no time zone,
no boolean and no binary vector type, PostgreSQL has all three. Each value is turned into a JSON
value first, then the row into one compact JSON array, and the table's checksum is the SHA-256 of
its rows' lines in key order:

- a time: ISO 8601 in UTC with microseconds and ``Z`` (both store microseconds);
- a boolean: ``true``/``false``, before integers (``True`` is an ``int`` in Python);
- a float: ``repr``, the shortest text that reads back as the same double;
- bytes (an embedding cache entry, a vector as float32): lower-case hex;
- a dict or list (a JSON column): canonical JSON text with sorted keys;
- text and integers as they are, NULL as ``null``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any


def canonical_value(value: Any) -> Any:
    """A JSON value that two equal stored values map to, whichever database returned them."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float | Decimal):
        return repr(float(value))
    if isinstance(value, datetime):
        moment = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    raise TypeError(f"no canonical form for {type(value).__name__}")


def row_line(values: Iterable[Any]) -> str:
    """One row as a compact JSON array of canonical values."""
    return json.dumps(
        [canonical_value(v) for v in values], separators=(",", ":"), ensure_ascii=False
    )


class Checksum:
    """Rows counted and hashed in the order given."""

    def __init__(self) -> None:
        self.rows = 0
        self._hash = hashlib.sha256()

    def add(self, values: Iterable[Any]) -> None:
        self.rows += 1
        self._hash.update(row_line(values).encode() + b"\n")

    @property
    def digest(self) -> str:
        return self._hash.hexdigest()[:16]
