"""A new memory's word index entries and their term counts are computed before the write lock
(``store.chunk_index``): they must be exactly what rebuilding the memory's chunks inside a
transaction writes, on both databases (dates resolved against the memory's time, CJK spaced,
every chunk, every posting)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from app.db.uow import UnitOfWork
from app.memory.service import Caller, MemoryService, NewMemory
from app.memory.store import repository as repo
from app.memory.store.writes import ChunkIndex, PreparedChunks, chunks_for, index_text, write_chunks
from tests.helpers.databases import migrated_engine

WORDS_SQL = {
    "sqlite": "SELECT tokens FROM memory_words ORDER BY chunk_id",
    "postgresql": "SELECT array_to_string(tokens, ' ') FROM memory_fts ORDER BY id",
}


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    with migrated_engine(request, request.param, tmp_path) as built:
        yield built


def indexed_words(engine: Engine) -> list[str]:
    with engine.connect() as conn:
        return [str(t) for (t,) in conn.execute(text(WORDS_SQL[engine.dialect.name]))]


def indexed_postings(engine: Engine) -> list[tuple[int, str, int, float]]:
    """(chunk rank, term, frequency, impact) of every posting: chunk ids change on a rebuild."""
    sql = "SELECT chunk_id, term, frequency, impact FROM memory_postings ORDER BY chunk_id, term"
    with engine.connect() as conn:
        rows = list(conn.execute(text(sql)))
    rank = {chunk_id: n for n, chunk_id in enumerate(sorted({r[0] for r in rows}))}
    return [(rank[c], str(t), int(f), round(float(i), 4)) for c, t, f, i in rows]


async def test_words_computed_before_the_lock_equal_those_built_inside(engine: Engine) -> None:
    uow = UnitOfWork(engine)
    content = " ".join(
        f"Paragraph {n}: yesterday we moved the 部署 pipeline to Zürich, ticket E-{n}." * 6
        for n in range(40)
    )
    new = NewMemory(
        content=content,
        category="events",
        title="Move",
        observed_at=datetime(2023, 5, 8, tzinfo=UTC),
    )
    outcome = await MemoryService(uow, None).commit_memory(Caller("t"), new)
    assert outcome.action == "ADD" and outcome.memory is not None
    before, postings_before = indexed_words(engine), indexed_postings(engine)
    assert len(before) == len(chunks_for(content)) > 3
    assert {t for _, t, _, _ in postings_before} >= {"部署", "zurich", "2023"}
    assert all("2023 05 07" in words for words in before)  # "yesterday", resolved
    with uow.write() as db:
        memory = repo.get_memory(db, "t", outcome.memory.id)
        assert memory is not None
        texts = chunks_for(memory.content)
        # Index texts only: the storage splits the words and counts the terms itself.
        bare = ChunkIndex([index_text(memory, chunk) for chunk in texts], {}, {})
        write_chunks(db, uow.storage, memory, PreparedChunks(texts, None, None), bare)
    assert indexed_words(engine) == before
    assert indexed_postings(engine) == postings_before  # term counts computed early, or inside


WORDS_BY_CHUNK_SQL = {
    "sqlite": "SELECT chunk_id, tokens FROM memory_words",
    "postgresql": "SELECT id, array_to_string(tokens, ' ') FROM memory_fts",
}


async def test_each_chunk_is_indexed_under_its_own_id(engine: Engine) -> None:
    uow = UnitOfWork(engine)
    content = " ".join(f"Paragraph marker{n} holds its own words. " * 8 for n in range(30))
    outcome = await MemoryService(uow, None).commit_memory(
        Caller("t"), NewMemory(content=content, category="events")
    )
    assert outcome.action == "ADD"
    with engine.connect() as conn:
        chunks = list(conn.execute(text("SELECT id, text FROM memory_chunks ORDER BY chunk_index")))
        words = {
            int(i): str(w) for i, w in conn.execute(text(WORDS_BY_CHUNK_SQL[engine.dialect.name]))
        }
    assert len(chunks) > 3 and set(words) == {int(i) for i, _ in chunks}
    # Each chunk's index text is its own text after the memory's title line, the same for all.
    extras = set()
    for chunk_id, chunk_text in chunks:
        own = set(re.findall(r"marker\d+", chunk_text))
        indexed = set(re.findall(r"marker\d+", words[int(chunk_id)]))
        assert own and own <= indexed
        extras.add(frozenset(indexed - own))
    assert len({frozenset()} | extras) <= 2
