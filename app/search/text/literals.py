"""Counting a query's literals in a text, as BM25 counts its terms (``app.search.ranking``).

At each position of the text the longest literal that starts there counts once; overlapping
occurrences count (``aa`` twice in ``aaa``). From word starts only (``visit`` in ``visited``, not in
``revisit``: the character before is not a letter or a digit of any kind), or anywhere (Chinese
pairs, quoted phrases). An underscore starts a word, as a hyphen does: ``E_PIPELINE_4417`` holds
``pipeline`` and ``4417`` as ``db-prod-7`` holds ``prod``, so a search for the parts of a snake_case
name finds it (the query side reads such a name whole too, app/search/text/query.py).

This was one regular expression with a lookahead tried at every position of the text; on a
Working Memory of 50 KB that was a noticeable cost a query, once per overview of the session.
``str.find`` visits only the places where a literal occurs. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence


def count_literals(text: str, literals: Sequence[str], *, word_start: bool) -> dict[str, int]:
    """How many times each literal counts in ``text``, in the order of their first counted
    occurrence (literals never counted are left out)."""
    longest: dict[int, str] = {}  # start position -> the longest literal found starting there
    for literal in literals:
        if not literal:
            continue
        at = text.find(literal)
        while at >= 0:
            # A word starts after a character that is not alphanumeric in Unicode's sense (what
            # ``\w`` matches in a str pattern but the underscore).
            if not word_start or at == 0 or not text[at - 1].isalnum():
                held = longest.get(at)
                if held is None or len(literal) > len(held):
                    longest[at] = literal
            at = text.find(literal, at + 1)
    if len(longest) <= 1:  # most texts a ranked search scores: nothing to order
        return dict.fromkeys(longest.values(), 1)
    counts: dict[str, int] = {}
    for at in sorted(longest):
        literal = longest[at]
        counts[literal] = counts.get(literal, 0) + 1
    return counts
