"""Shared fixtures: a migrated SQLite template copied per test, and the app under ASGI transport."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from asgi_lifespan import LifespanManager

from app.db.engine import create_db_engine
from app.db.migrate import upgrade_to_head
from app.logging import configure_logging
from app.main import create_app
from app.settings import Settings


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


@pytest.fixture
def db_path(tmp_path: Path, migrated_template: Path) -> Path:
    path = tmp_path / "ce.db"
    shutil.copyfile(migrated_template, path)
    return path


@pytest.fixture
def make_settings(db_path: Path) -> Callable[..., Settings]:
    """Settings for a test: its own database file, a fast worker; overrides as keyword groups."""

    def build(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "database_url": f"sqlite:///{db_path}",
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

    def __init__(self, settings: Settings) -> None:
        self.app = create_app(settings, configure_logs=False)
        self._manager = LifespanManager(self.app, startup_timeout=30, shutdown_timeout=30)
        self._client: httpx.AsyncClient | None = None

    async def __aenter__(self) -> httpx.AsyncClient:
        await self._manager.__aenter__()
        transport = httpx.ASGITransport(app=self._manager.app)
        self._client = httpx.AsyncClient(transport=transport, base_url="http://ce.test", timeout=60)
        return self._client

    async def __aexit__(self, *exc: object) -> None:
        assert self._client is not None
        await self._client.aclose()
        await self._manager.__aexit__(*exc)
