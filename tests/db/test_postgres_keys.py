"""Stored API keys on PostgreSQL with two API replicas on one database (docs/api.md, Identity):
a key made through one replica works on both, a revoked key is refused by both on the very next
request, and each tenant sees only its own sessions, archives and memories through either."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack

import httpx
import pytest

from app.db.engine import create_db_engine
from app.db.migrate import upgrade_to_head
from app.db.uow import UnitOfWork
from app.keys.service import create_key, revoke_key
from app.settings import Settings
from tests.conftest import app_client
from tests.helpers import postgres
from tests.helpers.tenants import assert_hidden, assert_visible, seed_tenant


@pytest.fixture
def database_url(server: postgres.PostgresServer) -> Iterator[str]:
    url = server.create_database()
    engine = create_db_engine(Settings(database_url=url))
    upgrade_to_head(engine)
    engine.dispose()
    yield url
    server.drop_database(url)


class Replica:
    """One API process's app: its HTTP client and its own engine (unit of work)."""

    def __init__(self, runner: app_client, client: httpx.AsyncClient) -> None:
        self.client = client
        self.uow: UnitOfWork = runner.app.state.services.uow


@pytest.fixture
async def replicas(database_url: str) -> AsyncIterator[tuple[Replica, Replica]]:
    settings = Settings(
        database_url=database_url,
        auto_migrate=False,
        worker={"enabled": False},  # API replicas; Phase 2 workers are not part of this
        embedding={"provider": "none"},
    )
    async with AsyncExitStack() as stack:
        built = []
        for _ in range(2):
            runner = app_client(settings)
            built.append(Replica(runner, await stack.enter_async_context(runner)))
        assert built[0].uow.engine is not built[1].uow.engine
        yield built[0], built[1]


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def status_of(replica: Replica, headers: dict[str, str]) -> int:
    return (await replica.client.get("/memories", headers=headers)).status_code


async def test_a_key_made_on_one_replica_works_on_both_and_its_revoke_holds_at_once(
    replicas: tuple[Replica, Replica],
) -> None:
    one, two = replicas
    create_key(two.uow, "keeper")  # keys stay required once the other is revoked
    made = create_key(one.uow, "acme")
    headers = bearer(made.key)
    assert [await status_of(one, headers), await status_of(two, headers)] == [200, 200]
    assert [await status_of(one, {}), await status_of(two, {})] == [401, 401]

    revoke_key(two.uow, made.view.prefix)
    assert [await status_of(one, headers), await status_of(two, headers)] == [401, 401]
    refused = (await one.client.get("/memories", headers=headers)).json()
    assert refused["error"]["code"] == "UNAUTHENTICATED"


async def test_tenants_are_isolated_through_both_replicas(
    replicas: tuple[Replica, Replica],
) -> None:
    one, two = replicas
    a = bearer(create_key(one.uow, "tenant-a").key)
    b = bearer(create_key(two.uow, "tenant-b").key)
    a_data = await seed_tenant(one.client, a, "alphaword")
    b_data = await seed_tenant(two.client, b, "bravoword")
    for replica in (one, two):
        await assert_visible(replica.client, a, a_data)
        await assert_visible(replica.client, b, b_data)
        await assert_hidden(replica.client, b, a_data)
        await assert_hidden(replica.client, a, b_data)
