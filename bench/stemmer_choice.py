"""Why English stems are the service's own light suffix rule, not a Snowball stemmer.

The memory word index keeps each chunk's words as FTS5 splits them, unstemmed; a query word is
searched as its stem followed by ``*`` (app/search/text/memory_phrases.py), so the stem must be a
prefix of the forms it should find. Snowball (Porter 2) stems are not always prefixes (``family``
→ ``famili``, ``city`` → ``citi``). For every content word of the retrieval evaluation's
questions (bench/conversations.py), this counts the forms in the conversations' vocabulary that
share its Snowball stem (its word family) and how many of them each prefix finds, and the other
words the prefix finds beside them.

    python -m bench.stemmer_choice        # needs snowballstemmer (the dev extra)
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable

from app.search.text.query import ENGLISH_STOPWORDS, stem
from bench.conversations import build_dataset


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 2]


def main() -> None:
    import snowballstemmer  # noqa: PLC0415 (a measurement's dependency, not the service's)

    english = snowballstemmer.stemmer("english")
    data = build_dataset()
    vocabulary = {w for c in data for t in c.turns for w in _words(t.text)}
    queries = [
        w for c in data for q in c.questions for w in _words(q.text) if w not in ENGLISH_STOPWORDS
    ]
    family: dict[str, set[str]] = defaultdict(set)
    for word in vocabulary:
        family[english.stemWord(word)].add(word)

    def measure(prefix_of: Callable[[str], str]) -> tuple[int, int, int]:
        found = missed = other = 0
        for word in queries:
            forms = family.get(english.stemWord(word), set())
            prefix = prefix_of(word)
            hit = {w for w in vocabulary if w.startswith(prefix)}
            found, missed, other = (
                found + len(forms & hit),
                missed + len(forms - hit),
                other + len(hit - forms),
            )
        return found, missed, other

    print(f"{len(queries)} question words, a vocabulary of {len(vocabulary)} words")
    for name, prefix_of in (
        ("light suffix rule (the service's)", stem),
        ("Snowball english", english.stemWord),
    ):
        found, missed, other = measure(prefix_of)
        share = missed / max(1, found + missed)
        print(
            f"{name:34s} family forms found {found}, missed {missed} ({share:.1%}), other words {other}"
        )
    not_prefix = sorted({w for w in queries if not w.startswith(english.stemWord(w))})
    print(
        f"question words whose Snowball stem is not their prefix: {len(not_prefix)}: {not_prefix}"
    )


if __name__ == "__main__":
    main()
