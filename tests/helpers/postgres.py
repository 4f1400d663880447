"""A throwaway PostgreSQL 15 server for the PostgreSQL backend's tests.

``initdb`` into a fresh temporary folder, a server that listens on a unix socket in that folder
only (no TCP port to collide with), durability switched off (the data dies with the test run), and
one database per caller with the extensions the schema needs (pgvector, pg_trgm). PostgreSQL
refuses to run as root, so when the tests run as root the server runs as the ``postgres`` system
user, in a folder made over to it. ``.ci/postgres`` installs the binaries.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PG_BIN = Path(os.environ.get("CE_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))
EXTENSIONS = ("vector", "pg_trgm")
SUPERUSER = "postgres"
SERVER_SETTINGS = {
    "listen_addresses": "''",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "shared_buffers": "64MB",
    "max_connections": "100",
}


def missing() -> str | None:
    """Why no server can be started here (None when one can); the tests fail with it."""
    if not (PG_BIN / "initdb").exists():
        return f"PostgreSQL 15 is not installed ({PG_BIN}): run .ci/postgres"
    share = Path("/usr/share/postgresql/15/extension")
    for name in EXTENSIONS:
        if not (share / f"{name}.control").exists():
            return f"the PostgreSQL extension {name} is not installed: run .ci/postgres"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(SUPERUSER)
        except KeyError:
            return "running as root and there is no postgres system user to run the server as"
    return None


class PostgresServer:
    """A running server: make databases on it and build their URLs."""

    def __init__(self, socket_dir: Path) -> None:
        self.socket_dir = socket_dir

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{SUPERUSER}@/{database}?host={self.socket_dir}"

    def create_database(self, name: str | None = None, template: str | None = None) -> str:
        """A new database with the extensions installed; returns its URL. With ``template`` (the
        name of a database nobody is connected to, e.g. one migrated once per test run) it is a
        copy of that one, which takes a fraction of a second: the per-test database of a suite."""
        import psycopg

        name = name or f"ce_{uuid.uuid4().hex[:12]}"
        copy = f' TEMPLATE "{template}"' if template else ""
        with psycopg.connect(
            host=str(self.socket_dir), user=SUPERUSER, dbname="postgres", autocommit=True
        ) as conn:
            conn.execute(f'CREATE DATABASE "{name}"{copy}')
        with psycopg.connect(
            host=str(self.socket_dir), user=SUPERUSER, dbname=name, autocommit=True
        ) as conn:
            for extension in EXTENSIONS:
                conn.execute(f"CREATE EXTENSION IF NOT EXISTS {extension}")
        return self.url(name)

    @staticmethod
    def database_name(url: str) -> str:
        return url.split("/", 3)[3].split("?", 1)[0]

    def drop_database(self, url: str) -> None:
        import psycopg

        name = self.database_name(url)
        with psycopg.connect(
            host=str(self.socket_dir), user=SUPERUSER, dbname="postgres", autocommit=True
        ) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _as_server_user(args: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return args
    return ["runuser", "-u", SUPERUSER, "--", *args]


def _run(args: list[str], cwd: Path) -> None:
    done = subprocess.run(
        _as_server_user(args), cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{args[0]} failed ({done.returncode}): {done.stderr or done.stdout}")


@contextmanager
def postgres_server(settings: dict[str, str] | None = None) -> Iterator[PostgresServer]:
    """Start a throwaway server; it is stopped and its files removed when the block ends.
    ``settings`` override ``SERVER_SETTINGS`` (a benchmark's larger ``shared_buffers``)."""
    reason = missing()
    if reason is not None:
        raise RuntimeError(reason)
    root = Path(tempfile.mkdtemp(prefix="ce-pg-"))
    data = root / "data"
    if os.geteuid() == 0:
        user = pwd.getpwnam(SUPERUSER)
        os.chown(root, user.pw_uid, user.pw_gid)
    options = " ".join(
        f"-c {key}={value}" for key, value in (SERVER_SETTINGS | (settings or {})).items()
    )
    started = False
    try:
        _run(
            [
                str(PG_BIN / "initdb"),
                "-D",
                str(data),
                "-U",
                SUPERUSER,
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C.UTF-8",
                "--no-sync",
            ],
            root,
        )
        _run(
            [
                str(PG_BIN / "pg_ctl"),
                "-D",
                str(data),
                "-l",
                str(root / "server.log"),
                "-w",
                "-t",
                "60",
                "-o",
                f"{options} -c unix_socket_directories={root}",
                "start",
            ],
            root,
        )
        started = True
        yield PostgresServer(root)
    finally:
        if started:
            _run([str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"], root)
        shutil.rmtree(root, ignore_errors=True)
