"""The normalised text that duplicate checks compare, and the key of a memory's content: a
digest of that text, kept on every memory row for the exact duplicate check. Pure."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from typing import Any


def normalise_text(text: Any) -> str:
    """Lower-case words only: NFKC, no Markdown, punctuation or extra whitespace."""
    folded = unicodedata.normalize("NFKC", str(text or "")).casefold()
    return " ".join(re.sub(r"[^\w\s]|_", " ", folded).split())


def content_key(text: Any) -> str:
    """What two texts equal after ``normalise_text`` share: a digest of the normalised text."""
    return hashlib.blake2b(normalise_text(text).encode(), digest_size=16).hexdigest()
