"""The near-internal SQLAlchemy and uvicorn names the service relies on, checked one by one.

The driver path (app/db/driver_query.py, driver_load.py, session_sql.py) reads SQLAlchemy's
compiled statements and fills ORM objects as its loader does; app/api/http_server.py subclasses
uvicorn's httptools protocol and its server. None of these is a documented API, so pyproject.toml
bounds both libraries to the releases checked here. A new release that renames or reshapes any
of them fails here with the name that changed, before the driver path's behaviour tests fail
in some less telling way; raise the bound once this file passes on it.
"""

from __future__ import annotations

import inspect
import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest
import uvicorn
from sqlalchemy import Integer, String, bindparam, column, create_engine, select, table
from sqlalchemy import inspect as inspect_mapper
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import (
    DeclarativeBase,
    Mapped,
    Session,
    make_transient_to_detached,
    mapped_column,
)
from sqlalchemy.orm.attributes import instance_state
from sqlalchemy.orm.util import identity_key
from sqlalchemy.sql.compiler import SQLCompiler
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from app.api.http_server import ServiceServer, TimedHttpProtocol
from app.db.models import ApiKey

ROOT = Path(__file__).resolve().parents[2]


def _bounds(name: str) -> tuple[str, str]:
    """The lower and upper bound pyproject.toml gives a dependency."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for spec in project["dependencies"]:
        if re.match(rf"{re.escape(name)}(\[|>|<|=|$)", spec, re.IGNORECASE):
            low = re.search(r">=([\d.]+)", spec)
            high = re.search(r"<([\d.]+)", spec)
            assert low and high, f"{spec!r} needs both a lower and an upper bound"
            return low.group(1), high.group(1)
    raise AssertionError(f"{name} is not a dependency")


def _release(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


@pytest.mark.parametrize("name", ["sqlalchemy", "uvicorn"])
def test_the_installed_release_is_within_the_checked_bounds(name: str) -> None:
    low, high = _bounds(name)
    installed = _release(version(name))
    assert _release(low) <= installed < _release(high), (name, version(name), low, high)


def _compiled(dialect: Dialect) -> SQLCompiler:
    statement = select(column("a", Integer)).where(
        column("b", String) == bindparam("word"),
        column("c", Integer).in_(bindparam("ids", expanding=True)),
    )
    compiled = statement.compile(dialect=dialect)
    assert isinstance(compiled, SQLCompiler)
    return compiled


def test_sqlalchemy_compiled_statement_attributes_the_driver_path_reads() -> None:
    dialect = create_engine("sqlite://").dialect
    compiled = _compiled(dialect)
    # DriverQuery._compile: the binds by name, each with type, value, required and expanding.
    assert set(compiled.binds) == {"word", "ids"}
    word, ids = compiled.binds["word"], compiled.binds["ids"]
    assert (word.required, word.expanding, ids.expanding) == (True, False, True)
    assert word.value is None
    assert word.type.dialect_impl(dialect).bind_processor(dialect) is None
    # SQLite's qmark style: the names in placeholder order.
    assert compiled.positional is True
    assert list(compiled.positiontup or ()) == ["word", "ids"]
    assert isinstance(compiled.string, str)
    assert "__[POSTCOMPILE_ids]" in compiled.string


def test_sqlalchemy_expanded_state_gives_sql_positions_and_the_expansion() -> None:
    dialect = create_engine("sqlite://").dialect
    compiled = _compiled(dialect)
    assert "params" in inspect.signature(compiled.construct_expanded_state).parameters
    state = compiled.construct_expanded_state({"word": "x", "ids": [1, 2, 3]})
    assert state.statement.count("?") == 4
    assert list(state.positiontup or ()) == ["word", "ids_1", "ids_2", "ids_3"]
    assert list(state.parameter_expansion["ids"]) == ["ids_1", "ids_2", "ids_3"]


def test_sqlalchemy_result_processor_and_dbapi_error_wrapping() -> None:
    dialect = create_engine("sqlite://").dialect
    # DriverQuery._conversions: a column type's result processor, given the driver's type code.
    impl = ApiKey.created_at.type.dialect_impl(dialect)
    assert "coltype" in inspect.signature(impl.result_processor).parameters
    # raised_as_sqlalchemy: DBAPIError.instance(statement, params, orig, dbapi_base_err).
    assert list(inspect.signature(DBAPIError.instance).parameters)[:4] == [
        "statement",
        "params",
        "orig",
        "dbapi_base_err",
    ]
    loaded = dialect.loaded_dbapi
    wrapped = DBAPIError.instance("SELECT 1", {}, loaded.OperationalError("boom"), loaded.Error)
    assert isinstance(wrapped, DBAPIError)
    assert isinstance(wrapped.orig, loaded.OperationalError)


class _Base(DeclarativeBase):
    pass


class _Row(_Base):
    __tablename__ = "row"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str]
    note: Mapped[str | None]


def test_sqlalchemy_orm_object_filled_as_the_loader_fills_it() -> None:
    """DriverLoad._attached: a new instance from the class manager, its state's dictionary, then
    detached with a key; the session holds it as loaded and reads a column not given on access."""
    engine = create_engine("sqlite://")
    try:
        _Base.metadata.create_all(engine)
        with Session(engine) as db:
            db.add(_Row(id=7, name="seven", note="kept"))
            db.commit()
        manager = inspect_mapper(_Row).class_manager
        loaded = manager.new_instance()
        instance_state(loaded).dict.update({"id": 7, "name": "seven"})
        make_transient_to_detached(loaded)
        assert instance_state(loaded).key == identity_key(_Row, (7,))
        with Session(engine) as db:
            db.add(loaded)
            assert db.identity_map.get(identity_key(_Row, (7,))) is loaded
            assert loaded.name == "seven"
            assert loaded.note == "kept"  # expired, so read from the row
            # The connection of a session's transaction: its DBAPI connection and a cursor on it.
            cursor = db.connection().connection.cursor()
            cursor.execute("SELECT name FROM row")
            assert cursor.fetchall() == [("seven",)]
            cursor.close()
    finally:
        engine.dispose()  # the in-memory database's connection: closed, not left to the collector


def test_sqlalchemy_table_clause_still_compiles_for_the_driver() -> None:
    statement = select(table("t", column("x")).c.x)
    assert isinstance(statement.compile(dialect=create_engine("sqlite://").dialect), SQLCompiler)


def test_uvicorn_protocol_callbacks_the_timed_protocol_overrides() -> None:
    for name in (
        "connection_made",
        "on_message_begin",
        "on_headers_complete",
        "connection_lost",
        "send_400_response",
    ):
        assert callable(getattr(HttpToolsProtocol, name, None)), name
        assert name in TimedHttpProtocol.__dict__, name
    assert list(inspect.signature(HttpToolsProtocol.send_400_response).parameters) == [
        "self",
        "msg",
    ]
    # The attributes _head_timed_out reads are set in the protocol's own __init__ and
    # connection_made (transport, loop, cycle, and the cycle's response_complete).
    init = inspect.getsource(HttpToolsProtocol.__init__)
    assert "self.loop" in init and "self.cycle" in init
    assert "self.transport" in inspect.getsource(HttpToolsProtocol.connection_made)
    from uvicorn.protocols.http.httptools_impl import RequestResponseCycle

    assert "self.response_complete" in inspect.getsource(RequestResponseCycle.__init__)


def test_uvicorn_server_startup_and_config_the_service_uses() -> None:
    assert "sockets" in inspect.signature(uvicorn.Server.startup).parameters
    assert "startup" in ServiceServer.__dict__
    parameters = inspect.signature(uvicorn.Config).parameters
    for name in ("http", "log_config", "access_log", "timeout_graceful_shutdown"):
        assert name in parameters, name
    config = uvicorn.Config(lambda: None, http=TimedHttpProtocol)
    assert config.http is TimedHttpProtocol
