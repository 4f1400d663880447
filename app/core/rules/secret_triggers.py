"""The cheap test before redaction: a rule runs only when one of its literal triggers occurs in the
text, so text without any secret-like word costs one lowercase copy and one scan for all the
triggers at once."""

from __future__ import annotations

import re

import regex

from app.core.rules.secret_patterns import RULES

_PRIVATE_KEY_TRIGGER = "-----begin "
ALL_TRIGGERS = (_PRIVATE_KEY_TRIGGER, *dict.fromkeys(t for rule in RULES for t in rule.triggers))


_Trie = dict[str, "_Trie"]


def _trie_pattern(words: tuple[str, ...]) -> str:
    """One alternation of the words, factored on shared prefixes ("s(?:k-|ecret)"): the engine
    reads a character once instead of trying every word at every position. A word that ends where
    a longer one goes on ends the match (any trigger is enough)."""
    tree: _Trie = {}
    for word in words:
        node = tree
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def alternation(node: _Trie) -> str:
        if "" in node:
            return ""
        branches = [re.escape(char) + alternation(child) for char, child in node.items()]
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"

    return alternation(tree)


# Most strings of a message ("role", "user", a sentence) hold no trigger; one scan tells. ``re``
# scans a short string with less overhead than ``regex`` (bench/RESULTS.md, Measurements behind the
# code), which is kept for long texts because it lets other threads run while it scans.
_TRIGGERS = _trie_pattern(ALL_TRIGGERS)
_TRIGGER_RE = re.compile(_TRIGGERS)
_LONG_TRIGGER_RE = regex.compile(_TRIGGERS)
SHORT_TEXT = 4096


def has_trigger(lowered: str) -> bool:
    if len(lowered) <= SHORT_TEXT:
        return _TRIGGER_RE.search(lowered) is not None
    return _LONG_TRIGGER_RE.search(lowered, concurrent=True) is not None


def might_hold_secret(text: str) -> bool:
    """False when no rule can match: none of their literal triggers occurs in the text."""
    return has_trigger(text.lower())


def short_json_without_secrets(json_text: str) -> bool:
    """True only when no string of the JSON value ``json_text`` serialises, key or value, can hold
    a secret: ``redact_value`` would give the value back unchanged. One scan of the text instead
    of one per string (a short message has dozens); a long text is not scanned (False), since its
    strings would be scanned again one by one.

    Exact for JSON written with raw UTF-8 (``compact_json``): every string is in it character for
    character, except the characters JSON escapes (``"``, ``\\`` and control characters), and no
    trigger holds one of those. Lowercasing maps each character on its own (the one exception, a
    capital sigma, depends on its neighbours but lowers to no trigger character), so a trigger in a
    lowered string is in the lowered JSON text too. A property test checks that the two agree."""
    return len(json_text) <= SHORT_TEXT and _TRIGGER_RE.search(json_text.lower()) is None
