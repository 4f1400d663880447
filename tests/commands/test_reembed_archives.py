"""`reembed` after a change of model also gives archived messages the new model's vectors, and a
second run finds nothing left to do."""

from __future__ import annotations

from pathlib import Path

import pysqlite3.dbapi2 as sqlite

from app.settings import Settings
from tests.api.test_archives import archive
from tests.commands.cli import cli_env, run_cli
from tests.conftest import app_client
from tests.helpers.messages import assistant, user
from tests.helpers.stub_embeddings import StubEmbeddings


def models(db: Path) -> list[str | None]:
    conn = sqlite.connect(str(db))
    try:
        rows = conn.execute("SELECT embedding_model FROM message_search ORDER BY message_id")
        return [r[0] for r in rows]
    finally:
        conn.close()


async def test_reembed_gives_archived_messages_the_new_models_vectors(
    db_path: Path, make_settings
) -> None:
    stub = StubEmbeddings()
    base_url = stub.start()
    try:
        old: Settings = make_settings(
            database_url=f"sqlite:///{db_path}",
            embedding={"provider": "openai", "base_url": base_url, "model": "old-model"},
        )
        async with app_client(old) as client:
            await archive(
                client,
                "s-cli",
                [user("the deploy runs on Fridays"), assistant("noted. Rollbacks need approval.")],
            )
        assert models(db_path) == ["old-model", "old-model"]
        env = cli_env(
            db_path,
            CE_EMBEDDING__PROVIDER="openai",
            CE_EMBEDDING__BASE_URL=base_url,
            CE_EMBEDDING__MODEL="new-model",
        )
        first = run_cli("reembed", env=env)
        second = run_cli("reembed", env=env)
    finally:
        stub.stop()
    assert first.returncode == 0, first.stderr
    assert "re-embedded 0 memories and 2 archived messages" in first.stdout
    assert "reembed archived messages" in first.stderr
    assert models(db_path) == ["new-model", "new-model"]
    assert second.returncode == 0, second.stderr
    assert "re-embedded 0 memories and 0 archived messages" in second.stdout
