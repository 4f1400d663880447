"""The search engine: pure functions, no I/O (an import contract in pyproject.toml checks it).

- ``text``: text analysis, the one tokenizer of every index and query (``text.words``), CJK
  spacing, stop words, query understanding (``text.query``, ``text.memory_phrases``), dates,
  literals, passages.
- ``phrases``: the typed phrase a word-index query is made of; it crosses the storage seam as is.
- ``bm25``, ``postings``, ``plan``: BM25 as FTS5 computes it, the impact-ordered postings of the
  memory word index and the planning of a search's candidate reads.
- ``ranking``: archive search's BM25, fusion and calibration; ``fusion``: memory search's merge,
  calibration and decay; ``diversity``: MMR.

The storage layer (app/db) reads and writes rows for these; it imports no text analysis.
"""
