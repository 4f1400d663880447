"""The PostgreSQL server of the PostgreSQL backend's tests: one throwaway server for the session,
each test module or test making its own databases on it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers import postgres


@pytest.fixture(scope="session")
def server() -> Iterator[postgres.PostgresServer]:
    reason = postgres.missing()
    if reason is not None:
        pytest.fail(reason)  # a missing server is a failure: `make test` installs it
    with postgres.postgres_server() as running:
        yield running
