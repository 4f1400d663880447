"""What of a long memory the embedding model reads (README, CE_EMBEDDING__MAX_TOKENS_PER_MEMORY):
its first chunks, cut to a budget of the model's own tokens, through POST /memories and import
alike; every chunk stays in the word index. With the bundled model."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

from app.settings import Settings
from tests.api.test_memories import (
    add,
    chunk_ids,
    import_records,
    index_counts,
    local_settings,
    record,
    search_contents,
)
from tests.conftest import app_client

# Each paragraph is one chunk of about 400 tokens as the service estimates them; the local model
# reads every letter and dash of a dashed run as a token, so such a chunk is about 1,600 of its.
DASHES = "\n\n".join(f"part{i} " + "a-" * 790 for i in range(6))
PROSE = "\n\n".join(
    f"Paragraph {i}: "
    + " ".join(f"the deployment note {i}.{j} says the cluster is fine" for j in range(40))
    for i in range(6)
)


def _embedding(make_settings: Callable[..., Settings], **embedding: object) -> Settings:
    return make_settings(embedding={"provider": "local", **embedding})


async def test_a_long_memory_gets_vectors_for_its_first_tokens_only(
    make_settings: Callable[..., Settings], db_path: Path
) -> None:
    async with app_client(local_settings(make_settings)) as client:
        memory = await add(client, DASHES, "events")
        chunks = chunk_ids(db_path, memory["id"])
        assert len(chunks) >= 6
        # The first chunk alone is over the 256-token budget: it is cut, and no other is read.
        assert index_counts(db_path, chunks) == {"fts": len(chunks), "vec": 1}
        # Every chunk is still found by its words.
        assert await search_contents(client, "part5", mode="bm25") == [DASHES]


async def test_the_token_budget_and_the_chunk_limit_are_settings(
    make_settings: Callable[..., Settings], db_path: Path
) -> None:
    async with app_client(local_settings(make_settings)) as client:
        default = chunk_ids(db_path, (await add(client, PROSE, "events"))["id"])
    # About 400 tokens a chunk: the default budget reads part of the first one.
    assert index_counts(db_path, default)["vec"] == 1 < len(default)
    async with app_client(_embedding(make_settings, max_tokens_per_memory=1_000_000)) as client:
        generous = chunk_ids(db_path, (await add(client, PROSE, "entities"))["id"])
    assert index_counts(db_path, generous)["vec"] == 4  # CE_EMBEDDING__MAX_CHUNKS_PER_MEMORY
    settings = _embedding(make_settings, max_tokens_per_memory=1_000_000, max_chunks_per_memory=2)
    async with app_client(settings) as client:
        two = chunk_ids(db_path, (await add(client, PROSE, "preferences"))["id"])
    assert index_counts(db_path, two)["vec"] == 2


async def test_an_imported_record_is_embedded_within_the_same_limits(
    make_settings: Callable[..., Settings], db_path: Path
) -> None:
    memory_id = str(uuid.uuid4())
    async with app_client(local_settings(make_settings)) as client:
        result = await import_records(client, [record(memory_id, DASHES)])
        assert result["imported"] == 1
        chunks = chunk_ids(db_path, memory_id)
        assert len(chunks) >= 6
        assert index_counts(db_path, chunks) == {"fts": len(chunks), "vec": 1}
