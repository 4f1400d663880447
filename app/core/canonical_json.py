"""Canonical JSON: one byte-stable serialisation for hashing and comparison."""

from __future__ import annotations

import json
from typing import Any


def canonical_json(value: Any) -> str:
    """Serialise with sorted keys, no insignificant whitespace and raw UTF-8."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def compact_json(value: Any) -> str:
    """Serialise preserving key order (for storage), without insignificant whitespace."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
