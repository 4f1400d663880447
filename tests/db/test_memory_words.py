"""The memory word index on SQLite and on PostgreSQL (app/search/postings.py): FTS5's bm25()
with the searched partitions' own statistics, read through impact-ordered postings and kept
counters.

Every answer is checked against an exhaustive scorer written here from FTS5's formula, which reads
the raw words of every chunk: the postings must find the same best chunks with the same scores,
the counters must equal counts made from scratch after any mix of writes and deletes, and a
partition's ranking must not move when other partitions (or tenants) change.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import event, text
from sqlalchemy.orm import Session

from app.db.base import Base
from app.db.uow import UnitOfWork
from app.search import plan
from app.search.plan import EXACT_COUNT_LIMIT, MIN_CANDIDATES
from app.search.text.memory_phrases import cjk_spaced, memory_phrases
from app.search.text.query import parse_query
from app.search.text.words import chunks_with_words, words
from tests.helpers.databases import migrated_engine

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
K1, B = 1.2, 0.75
VOCABULARY = (
    "deploy deployed deploying deployment script rollback database backup port cafe paris rome "
    "visit visited python editor vim emacs prefers billing checkout failed error timeout retry "
    "alpha beta gamma delta kafka redis nginx monday friday weekend"
).split()
CHINESE = [
    "支付服务部署失败",
    "数据库备份完成",
    "部署前先备份数据库",
    "错误码五零三",
    "服务重启成功",
]
MAIN = ("user", "u1")
MIN_OVERLAP = 0.8
QUERIES = [
    "deploy script",
    "why did the billing deploy fail",
    "which editor does the user prefer for python",
    "支付服务部署失败的错误码",
    "数据库 备份",
    '"rollback database"',
    "kafka",
    "nothing-like-this",
]


def _chunk_text(rng: random.Random) -> str:
    # Zipf-like: early words of the vocabulary are common, late ones rare.
    count = rng.randint(3, 30)
    picked = [
        VOCABULARY[min(int(rng.paretovariate(0.9)) - 1, len(VOCABULARY) - 1)] for _ in range(count)
    ]
    if rng.random() < 0.3:
        picked.insert(rng.randrange(len(picked) + 1), rng.choice(CHINESE))
    return " ".join(picked)


class Corpus:
    """The chunks written so far: id → (partition, words), the reference scorer's input."""

    def __init__(self, uow: UnitOfWork) -> None:
        self.uow = uow
        self.chunks: dict[int, tuple[str, list[str]]] = {}
        self._next = 1

    def add(self, tenant: str, owner: tuple[str, str], texts: list[str]) -> list[int]:
        partition = f"{tenant}:{owner[0]}:{owner[1]}"
        memory_id = f"{partition}:{self._next}"
        ids = list(range(self._next, self._next + len(texts)))
        self._next += len(texts)
        prepared = [cjk_spaced(t) for t in texts]
        with self.uow.write() as db:
            _insert(db, "memories", [_memory(memory_id, tenant, owner)])
            _insert(
                db,
                "memory_chunks",
                [
                    {
                        "id": i,
                        "tenant_id": tenant,
                        "memory_id": memory_id,
                        "chunk_index": n,
                        "text": t,
                    }
                    for n, (i, t) in enumerate(zip(ids, texts, strict=True))
                ],
            )
            self.uow.storage.memory_words.index_memory_chunks(
                db,
                chunks_with_words([(i, partition, t) for i, t in zip(ids, prepared, strict=True)]),
            )
        for i, t in zip(ids, prepared, strict=True):
            self.chunks[i] = (partition, words(t))
        return ids

    def remove(self, chunk_ids: list[int]) -> None:
        with self.uow.write() as db:
            self.uow.storage.unindex_memory_chunks(db, chunk_ids)
        for i in chunk_ids:
            del self.chunks[i]

    def search(
        self, tenant: str, owners: list[tuple[str, str]], query: str, limit: int
    ) -> list[Any]:
        expression = memory_phrases(parse_query(query, today=NOW.date()))
        with self.uow.read() as db:
            return self.uow.storage.memory_words.match_memory_chunks(
                db, tenant, owners, expression, limit
            )


def _memory(memory_id: str, tenant: str, owner: tuple[str, str]) -> dict[str, Any]:
    return {
        "id": memory_id,
        "tenant_id": tenant,
        "owner_kind": owner[0],
        "owner_id": owner[1],
        "uri": f"mem://{memory_id}",
        "category": "fact",
        "title": "",
        "content": "",
        "created_at": NOW,
        "updated_at": NOW,
    }


def _insert(db: Session, table: str, rows: list[dict[str, Any]]) -> None:
    db.execute(Base.metadata.tables[table].insert(), rows)


# ------------------------------------------------------------------ the exhaustive reference


def _is_cjk(token: str) -> bool:
    return len(token) == 1 and "\u4e00" <= token <= "\u9fff"


def _occurrences(tokens: list[str], phrase: tuple[str, ...], prefix: bool) -> int:
    size = len(phrase)
    found = 0
    for start in range(len(tokens) - size + 1):
        window = tokens[start : start + size]
        last_ok = window[-1] == phrase[-1] or (prefix and window[-1].startswith(phrase[-1]))
        found += window[:-1] == list(phrase[:-1]) and last_ok
    return found


def _chunks_holding(rows: list[list[str]], phrase: tuple[str, ...], prefix: bool) -> int:
    # Exact, as FTS5 counts: every phrase of these queries is held by fewer chunks than
    # EXACT_COUNT_LIMIT chunks, under which the postings count prefixes and word phrases exactly too.
    return sum(_occurrences(tokens, phrase, prefix) > 0 for tokens in rows)


def reference(
    corpus: Corpus, tenant: str, owners: list[tuple[str, str]], query: str, limit: int
) -> list[tuple[int, float]]:
    partitions = {f"{tenant}:{kind}:{owner}" for kind, owner in owners}
    rows = {i: tokens for i, (p, tokens) in corpus.chunks.items() if p in partitions}
    phrases = [(p.tokens, p.prefix) for p in memory_phrases(parse_query(query, today=NOW.date()))]
    total = len(rows)
    assert total <= EXACT_COUNT_LIMIT  # so every count the postings make is exact too
    average = sum(len(t) for t in rows.values()) / total if total else 1.0
    idfs = []
    for phrase, prefix in phrases:
        holding = _chunks_holding(list(rows.values()), phrase, prefix)
        idfs.append(max(1e-6, math.log((total - holding + 0.5) / (holding + 0.5))))
    scored = []
    for chunk_id, tokens in rows.items():
        score = 0.0
        for (phrase, prefix), idf in zip(phrases, idfs, strict=True):
            tf = _occurrences(tokens, phrase, prefix)
            if tf:
                score += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * len(tokens) / average))
        if score > 0:
            scored.append((chunk_id, -score))
    scored.sort(key=lambda item: (item[1], item[0]))
    return scored[:limit]


# ------------------------------------------------------------------------------------- tests


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def corpus(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Corpus]:
    with migrated_engine(request, request.param, tmp_path_factory.mktemp("words")) as engine:
        rng = random.Random(11)
        built = Corpus(UnitOfWork(engine))
        for _ in range(40):  # 400 chunks in the searched partition, 10 per memory
            built.add("t", MAIN, [_chunk_text(rng) for _ in range(10)])
        built.add("t", ("agent", "main"), [_chunk_text(rng) for _ in range(30)])
        yield built


def _assert_matches_reference(
    corpus: Corpus, tenant: str, owners: list[tuple[str, str]], query: str, limit: int = 10
) -> list[Any]:
    """Each hit has its exhaustive score (the statistics are exact); the hits are the exhaustive
    best ones, or, where the query has several phrases and the partition more matching chunks than
    a term's postings read, at least ``MIN_OVERLAP`` of them."""
    found = corpus.search(tenant, owners, query, limit)
    every = dict(reference(corpus, tenant, owners, query, len(corpus.chunks)))
    expected = list(every)[:limit]
    assert [h.score for h in found] == pytest.approx([every[h.row_id] for h in found], rel=1e-5)
    assert [h.score for h in found] == sorted(h.score for h in found)
    phrases = memory_phrases(parse_query(query, today=NOW.date()))
    if len(phrases) == 1 or len(every) <= MIN_CANDIDATES:
        assert [h.row_id for h in found] == expected, query
    else:
        overlap = len({h.row_id for h in found} & set(expected)) / len(expected)
        assert overlap >= MIN_OVERLAP, (query, overlap)
    return found


@pytest.mark.parametrize("query", QUERIES)
def test_best_chunks_and_scores_are_the_exhaustive_bm25(corpus: Corpus, query: str) -> None:
    found = _assert_matches_reference(corpus, "t", [MAIN], query)
    assert bool(found) == (query != "nothing-like-this")
    _assert_matches_reference(corpus, "t", [MAIN, ("agent", "main")], query, limit=40)


def test_a_partition_ranks_the_same_whatever_other_partitions_hold(corpus: Corpus) -> None:
    before = {q: corpus.search("t", [MAIN], q, 10) for q in QUERIES}
    rng = random.Random(5)
    other_user = corpus.add("t", ("user", "u2"), ["deploy kafka kafka"] * 50)
    other_tenant = corpus.add("other", MAIN, [_chunk_text(rng) for _ in range(200)])
    for query in QUERIES:
        assert corpus.search("t", [MAIN], query, 10) == before[query]
        _assert_matches_reference(corpus, "t", [MAIN, ("user", "u2")], query)
        _assert_matches_reference(corpus, "other", [MAIN], query)
    corpus.remove(other_user + other_tenant)


def test_counters_equal_counts_from_scratch_after_writes_and_deletes(corpus: Corpus) -> None:
    rng = random.Random(3)
    added = corpus.add("t", MAIN, [_chunk_text(rng) for _ in range(20)])
    corpus.remove([*added[::2], 1, 2, 3])
    with corpus.uow.read() as db:
        terms = {
            (p, t): n
            for p, t, n in db.execute(text("SELECT partition, term, chunks FROM memory_terms"))
            if n
        }
        partitions = {
            p: (c, w)
            for p, c, w in db.execute(
                text("SELECT partition, chunks, words FROM memory_partitions")
            )
            if c or w
        }
        postings = db.execute(text("SELECT count(*) FROM memory_postings")).scalar_one()
    expected_terms: dict[tuple[str, str], int] = {}
    expected_partitions: dict[str, tuple[int, int]] = {}
    expected_postings = 0
    for partition, tokens in corpus.chunks.values():
        held = set(tokens) | {
            a + b for a, b in itertools.pairwise(tokens) if _is_cjk(a) and _is_cjk(b)
        }
        expected_postings += len(held)
        for term in held:
            expected_terms[(partition, term)] = expected_terms.get((partition, term), 0) + 1
        chunks, count = expected_partitions.get(partition, (0, 0))
        expected_partitions[partition] = (chunks + 1, count + len(tokens))
    assert terms == expected_terms
    assert partitions == expected_partitions
    assert postings == expected_postings
    for query in QUERIES:
        _assert_matches_reference(corpus, "t", [MAIN], query)


def _supersede(corpus: Corpus, chunk_ids: list[int]) -> None:
    with corpus.uow.write() as db:
        db.execute(
            text(
                "UPDATE memories SET superseded_by = id WHERE id = "
                "(SELECT memory_id FROM memory_chunks WHERE id = :c)"
            ),
            [{"c": chunk_id} for chunk_id in chunk_ids],
        )


def test_superseded_memories_are_not_found(corpus: Corpus) -> None:
    [chunk_id] = corpus.add("t", MAIN, ["zebra zebra crossing"])
    assert [h.row_id for h in corpus.search("t", [MAIN], "zebra", 5)] == [chunk_id]
    _supersede(corpus, [chunk_id])
    assert corpus.search("t", [MAIN], "zebra", 5) == []


def test_current_memories_below_more_superseded_ones_than_the_limit_are_found(
    corpus: Corpus,
) -> None:
    """The best chunks are superseded, more of them than asked for: the current ones that score
    below them still fill the answer (current-ness is checked best first, a batch at a time)."""
    superseded = [corpus.add("t", MAIN, ["okapi okapi okapi"])[0] for _ in range(5)]
    current = [
        corpus.add("t", MAIN, [f"okapi seen near the {w} river"])[0] for w in ("red", "blue")
    ]
    assert {h.row_id for h in corpus.search("t", [MAIN], "okapi", 2)} <= set(superseded)
    _supersede(corpus, superseded)
    assert sorted(h.row_id for h in corpus.search("t", [MAIN], "okapi", 2)) == current


def test_term_documents_are_the_searched_partitions_counts(corpus: Corpus) -> None:
    owners = [MAIN, ("agent", "main")]
    partitions = [f"t:{kind}:{owner}" for kind, owner in owners]
    rows = [tokens for p, tokens in corpus.chunks.values() if p in partitions]
    with corpus.uow.read() as db:
        documents, counts = corpus.uow.storage.memory_words.memory_term_documents(
            db, partitions, ["deploy", "kafka", "absent"], ["deploy", "zz"]
        )
    assert documents == len(rows)
    assert counts["deploy"] == sum("deploy" in tokens for tokens in rows)
    assert counts["kafka"] == sum("kafka" in tokens for tokens in rows)
    assert counts["absent"] == 0 and counts["zz*"] == 0
    forms = {t for tokens in rows for t in tokens if t.startswith("deploy")}
    assert len(forms) > 1  # deploy, deployed, ...: the prefix sums its words' counts
    assert counts["deploy*"] == min(len(rows), sum(sum(f in t for t in rows) for f in forms))


class _RolledBack(Exception):
    pass


def test_a_search_reads_the_counters_once_until_it_writes(corpus: Corpus) -> None:
    """The ideal chunk's rank reuses the counters the search has just read; a write in the same
    transaction makes them stale, and the next read goes to the database again."""
    counter_reads: list[str] = []

    def spy(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().startswith("SELECT") and "FROM memory_partitions" in statement:
            counter_reads.append(statement)

    phrases = memory_phrases(parse_query("kafka deploy", today=NOW.date()))
    expression = phrases
    # What app/memory/search/hybrid.py asks for the ideal chunk: each phrase's words, and its prefix.
    tokens = [t for p in phrases for t in (p.tokens[:-1] if p.prefix else p.tokens)]
    prefixes = [p.tokens[-1] for p in phrases if p.prefix]
    partitions = ["t:user:u1"]
    event.listen(corpus.uow.engine, "before_cursor_execute", spy)
    try:
        with pytest.raises(_RolledBack), corpus.uow.write() as db:
            storage = corpus.uow.storage
            assert storage.memory_words.match_memory_chunks(db, "t", [MAIN], expression, 10)
            assert len(counter_reads) == 1
            chunks_before, before = storage.memory_words.memory_term_documents(
                db, partitions, tokens, prefixes
            )
            assert len(counter_reads) == 1
            _insert(db, "memories", [_memory("t:user:u1:extra", "t", MAIN)])
            _insert(
                db,
                "memory_chunks",
                [{"id": 99999, "tenant_id": "t", "memory_id": "t:user:u1:extra", "text": "kafka"}],
            )
            storage.memory_words.index_memory_chunks(
                db, chunks_with_words([(99999, partitions[0], "kafka")])
            )
            chunks_after, after = storage.memory_words.memory_term_documents(
                db, partitions, tokens, prefixes
            )
            assert len(counter_reads) == 2
            assert chunks_after == chunks_before + 1
            # Both words are searched as prefixes (English stems): "kafka*" counts "kafka".
            assert after["kafka*"] == before["kafka*"] + 1
            raise _RolledBack  # leave the module's corpus as it was
    finally:
        event.remove(corpus.uow.engine, "before_cursor_execute", spy)


@pytest.mark.parametrize("query", ['"rollback database"', "支付服务部署失败的错误码"])
def test_whole_phrases_through_the_phrase_index_match_the_exhaustive_bm25(
    corpus: Corpus, query: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A phrase whose rarest word has more postings than the budget is found through the tsvector
    index instead of those postings (forced here with a budget of one posting)."""
    monkeypatch.setattr(plan, "SUMMED_POSTINGS", 1)
    _assert_matches_reference(corpus, "t", [MAIN], query)
    _assert_matches_reference(corpus, "t", [MAIN, ("agent", "main")], query, limit=40)


@pytest.mark.parametrize(
    "budget", [1, 200], ids=["through the phrase index", "among the bounding postings"]
)
def test_a_phrase_of_common_words_is_found_whole_when_the_summed_postings_are_few(
    corpus: Corpus, budget: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With one summed posting a term, the rows holding "rollback database" are neither among
    each word's few best postings nor summed: only the whole-phrase rows find them. Under 200
    postings the bounding word's rows are read and matched; over it, the phrase index is asked."""
    monkeypatch.setattr(plan, "SUMMED_POSTINGS", budget)
    monkeypatch.setattr(plan, "MIN_SUMMED", 1)
    query = '"rollback database"'
    found = corpus.search("t", [MAIN], query, 10)
    expected = [chunk_id for chunk_id, _ in reference(corpus, "t", [MAIN], query, 10)]
    assert len(expected) == 10
    assert [h.row_id for h in found] == expected
