"""Shared fixtures: a migrated database per test, on SQLite or on PostgreSQL, and the app under ASGI
transport.

The API, job, end-to-end and console suites run on both backends: a test there that builds its settings with
``make_settings`` (or uses ``settings`` / ``client``) runs once per backend, ``[sqlite]`` and
``[postgresql]``. A test that opens the SQLite file itself (``db_path``) or is marked
``sqlite_only`` (SQLite's own behaviour: file permissions, WAL, extensions) runs on SQLite only.
Each PostgreSQL test gets a copy of a database migrated once per run (``CREATE DATABASE …
TEMPLATE``) on one throwaway server per run (tests/helpers/postgres.py); a missing server is a
failure, never a skip."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from asgi_lifespan import LifespanManager
from sqlalchemy import Engine, event

from app.db.engine import create_db_engine
from app.db.migrate import upgrade_to_head
from app.logging import configure_logging
from app.main import create_app
from app.settings import Settings
from tests.helpers import postgres

ROOT = Path(__file__).resolve().parents[1]
BOTH_BACKENDS = ("tests/api/", "tests/jobs/", "tests/e2e/", "tests/console/")


@pytest.fixture(scope="session", autouse=True)
def quiet_logs() -> None:
    """Warnings and errors only: request logs would drown the test output."""
    configure_logging("console", "WARNING")


@pytest.fixture(scope="session")
def migrated_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database file migrated once per test run (built by the migrations, not create_all)."""
    path = tmp_path_factory.mktemp("template") / "template.db"
    engine = create_db_engine(Settings(database_url=f"sqlite:///{path}"))
    upgrade_to_head(engine)
    engine.dispose()
    return path


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" not in metafunc.fixturenames:
        return
    path = metafunc.definition.path.relative_to(ROOT).as_posix()
    both = (
        path.startswith(BOTH_BACKENDS)
        and "db_path" not in metafunc.fixturenames
        and metafunc.definition.get_closest_marker("sqlite_only") is None
    )
    metafunc.parametrize("backend", ["sqlite", "postgresql"] if both else ["sqlite"], indirect=True)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    return str(getattr(request, "param", "sqlite"))


@pytest.fixture(scope="session")
def server() -> Iterator[postgres.PostgresServer]:
    """One throwaway PostgreSQL server for the run, started by the first test that needs it."""
    reason = postgres.missing()
    if reason is not None:
        pytest.fail(reason)  # a missing server is a failure: `make test` installs it
    with postgres.postgres_server() as running:
        yield running


@pytest.fixture(scope="session")
def postgres_template(server: postgres.PostgresServer) -> str:
    """A PostgreSQL database migrated once per run; each test gets a copy of it."""
    url = server.create_database("ce_template")
    engine = create_db_engine(Settings(database_url=url))
    upgrade_to_head(engine)
    engine.dispose()  # a template must have no connections when it is copied
    return server.database_name(url)


@pytest.fixture
def db_path(tmp_path: Path, migrated_template: Path) -> Path:
    path = tmp_path / "ce.db"
    shutil.copyfile(migrated_template, path)
    return path


@pytest.fixture
def database_url(backend: str, request: pytest.FixtureRequest) -> Iterator[str]:
    if backend == "sqlite":
        yield f"sqlite:///{request.getfixturevalue('db_path')}"
        return
    server: postgres.PostgresServer = request.getfixturevalue("server")
    url = server.create_database(template=request.getfixturevalue("postgres_template"))
    opened: list[Any] = []

    def track(connection: Any, _record: Any) -> None:
        opened.append(connection)

    # Tests build engines they never dispose (SQLite does not mind); psycopg warns about every
    # connection left to the garbage collector, so the test's connections are closed here.
    event.listen(Engine, "connect", track)
    try:
        yield url
    finally:
        event.remove(Engine, "connect", track)
        for connection in opened:
            connection.close()
        server.drop_database(url)


@pytest.fixture
def make_settings(database_url: str) -> Callable[..., Settings]:
    """Settings for a test: its own database, a fast worker; overrides as keyword groups."""

    def build(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "database_url": database_url,
            "auto_migrate": False,
            "worker": {"poll_interval_ms": 20, "lease_s": 5},
            # Tests that exercise recall ask for the real local model explicitly.
            "embedding": {"provider": "none"},
        }
        for key, value in overrides.items():
            if isinstance(value, dict) and isinstance(values.get(key), dict):
                values[key] = {**values[key], **value}
            else:
                values[key] = value
        return Settings(**values)

    return build


@pytest.fixture
def settings(make_settings: Callable[..., Settings]) -> Settings:
    return make_settings()


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(settings) as c:
        yield c


class app_client:
    """An httpx client bound to a fresh app (lifespan run) for the given settings."""

    def __init__(self, settings: Settings, raise_app_exceptions: bool = True) -> None:
        self.app = create_app(settings, configure_logs=False)
        self._manager = LifespanManager(self.app, startup_timeout=30, shutdown_timeout=30)
        self._client: httpx.AsyncClient | None = None
        # False: an unexpected exception is seen as the 500 a real server answers with it.
        self._raise = raise_app_exceptions

    async def __aenter__(self) -> httpx.AsyncClient:
        await self._manager.__aenter__()
        transport = httpx.ASGITransport(app=self._manager.app, raise_app_exceptions=self._raise)
        self._client = httpx.AsyncClient(transport=transport, base_url="http://ce.test", timeout=60)
        return self._client

    async def __aexit__(self, *exc: object) -> None:
        assert self._client is not None
        await self._client.aclose()
        await self._manager.__aexit__(*exc)
