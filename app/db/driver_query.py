"""Statements run on the driver's connection, with SQL that SQLAlchemy compiled once per database.

Every request resolves its API key before anything else, with a read of a few index probes. Through
SQLAlchemy (a session, the compiled-statement cache, parameter and result processing) that read
cost many times what SQLite takes to answer it. A DriverQuery compiles its Core statement once
per dialect and runs the SQL on a DBAPI connection. The statements of every stored turn run the
same way, inside the turn's transaction (``in_session``): seven of them.

Parameters are converted on the way in as SQLAlchemy converts them (a ``datetime`` becomes what
the column type stores), with the bind processors read once when the statement compiles. An
expanding parameter (``IN``) is expanded by SQLAlchemy's compiled statement, once per length of
its list; its values must need no conversion. Rows come back as the driver reads them (an
``EXISTS`` is 0 or 1 on SQLite, a bool on PostgreSQL) unless the query asks for the columns'
result conversion (``convert_results``, as ``DriverLoad`` does for a mapped row). Driver errors
are raised as SQLAlchemy raises them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler

R = TypeVar("R")

_MAX_SHAPES = 256  # IN-list lengths remembered per statement and database


_Conversions = tuple[Callable[[Any], Any] | None, ...] | None


@dataclass(frozen=True, slots=True)
class _Shape:
    sql: str
    positions: tuple[str, ...] | None
    expansion: dict[str, list[str]]  # an IN list's name -> the names of its placeholders


@dataclass(frozen=True, slots=True)
class _Compiled:
    compiled: SQLCompiler
    sql: str
    positions: tuple[str, ...] | None  # parameter names in placeholder order (qmark); None: named
    values: dict[str, Any]  # the statement's own bound values (literals), under the caller's
    required: frozenset[str]  # names the caller must give
    processors: dict[str, Callable[[Any], Any]]  # conversions of parameters on the way in
    expanding: tuple[str, ...]  # IN lists: the SQL depends on their lengths
    # The SQL for each combination of IN-list lengths met so far.
    shapes: dict[tuple[int, ...], _Shape] = field(default_factory=dict)


# A repository's function that reads on the driver's connection takes one of these:
# ``UnitOfWork.driver_row`` (the first row, or None) or ``UnitOfWork.driver_rows`` (every row).
RowReader = Callable[["DriverQuery", Mapping[str, Any]], "tuple[Any, ...] | None"]
RowsReader = Callable[["DriverQuery", Mapping[str, Any]], "list[tuple[Any, ...]]"]


class DriverQuery:
    """A Core statement compiled once per dialect: ``UnitOfWork.driver_row`` runs a read on a
    pooled connection, ``in_session`` runs it inside a session's transaction."""

    def __init__(
        self,
        statement: ClauseElement,
        columns: Sequence[str] | None = None,
        *,
        convert_results: bool = False,
    ) -> None:
        self.statement = statement
        # An insert without values compiles to these columns.
        self.columns = list(columns) if columns is not None else None
        self.convert_results = convert_results
        self._compiled: dict[str, _Compiled] = {}
        # Conversions of the result's columns per dialect (None: rows as the driver reads them).
        self._results: dict[str, _Conversions] = {}

    def statement_text(self) -> str:
        """The statement, for error messages (a compilation: call it only on an error)."""
        return str(self.statement)

    def first_row(
        self, connection: Any, dialect: Dialect, params: Mapping[str, Any]
    ) -> tuple[Any, ...] | None:
        """The first row of the statement on a DBAPI connection, or None."""
        with self._cursor(connection, dialect, params) as cursor:
            row = cursor.fetchone()
            results = self._conversions(dialect, cursor)
        return None if row is None else _row(results, row)

    def all_rows(
        self, connection: Any, dialect: Dialect, params: Mapping[str, Any]
    ) -> list[tuple[Any, ...]]:
        """Every row of the statement on a DBAPI connection."""
        with self._cursor(connection, dialect, params) as cursor:
            rows = cursor.fetchall()
            results = self._conversions(dialect, cursor)
        return [_row(results, row) for row in rows]

    def run(self, connection: Any, dialect: Dialect, params: Mapping[str, Any]) -> int:
        """Execute a write; returns the driver's row count."""
        with self._cursor(connection, dialect, params) as cursor:
            return int(cursor.rowcount)

    def run_many(
        self, connection: Any, dialect: Dialect, rows: Sequence[Mapping[str, Any]]
    ) -> None:
        """Execute a write once per parameter set (the driver's ``executemany``)."""
        if not rows:
            return
        compiled = self._compiled.get(dialect.name) or self._compile(dialect)
        if compiled.expanding:
            raise TypeError("an IN list cannot be executed many times")
        values = [self._arguments(compiled, row)[1] for row in rows]
        cursor = connection.cursor()
        try:
            cursor.executemany(compiled.sql, values)
        finally:
            cursor.close()

    def in_session(self, db: Session) -> SessionStatement:
        """This statement on the connection of ``db``'s transaction."""
        return SessionStatement(self, db)

    @contextmanager
    def _cursor(
        self, connection: Any, dialect: Dialect, params: Mapping[str, Any]
    ) -> Iterator[Any]:
        compiled = self._compiled.get(dialect.name) or self._compile(dialect)
        sql, values = self._arguments(compiled, params)
        cursor = connection.cursor()
        try:
            cursor.execute(sql, values)
            yield cursor
        finally:
            cursor.close()

    def _arguments(self, compiled: _Compiled, params: Mapping[str, Any]) -> tuple[str, Any]:
        """The SQL and the driver's parameters (a list for qmark, a dict for named styles)."""
        missing = compiled.required.difference(params)
        if missing:
            raise TypeError(f"no value for parameter(s) {sorted(missing)}")
        named = _converted(compiled.processors, {**compiled.values, **params})
        sql, positions = compiled.sql, compiled.positions
        if compiled.expanding:
            lengths = tuple(len(named[name]) for name in compiled.expanding)
            shape = compiled.shapes.get(lengths) or _expanded(compiled, lengths, named)
            for name, placeholders in shape.expansion.items():
                named.update(zip(placeholders, named.pop(name), strict=True))
            sql, positions = shape.sql, shape.positions
        if positions is None:
            return sql, named
        return sql, [named[name] for name in positions]

    def _compile(self, dialect: Dialect) -> _Compiled:
        # An insert is compiled as for executemany: no RETURNING of the new row's id.
        compiled = self.statement.compile(
            dialect=dialect, column_keys=self.columns, for_executemany=self.columns is not None
        )
        if not isinstance(compiled, SQLCompiler):
            raise TypeError(f"not a SQL statement: {self.statement_text()}")
        binds = compiled.binds  # by the name the SQL gives each (an anonymous literal has one)
        processors: dict[str, Callable[[Any], Any]] = {}
        for name, bind in binds.items():
            processor = bind.type.dialect_impl(dialect).bind_processor(dialect)
            if processor is None:
                continue
            if bind.expanding:
                raise TypeError(f"IN list {name!r} ({bind.type}) needs conversion")
            processors[name] = processor
        positions = tuple(compiled.positiontup or ()) if compiled.positional else None
        found = _Compiled(
            compiled=compiled,
            sql=compiled.string,
            positions=positions,
            values={name: b.value for name, b in binds.items() if not b.required},
            required=frozenset(name for name, b in binds.items() if b.required),
            processors=processors,
            expanding=tuple(name for name, b in binds.items() if b.expanding),
        )
        self._compiled[dialect.name] = found
        return found

    def _conversions(self, dialect: Dialect, cursor: Any) -> _Conversions:
        """The result's conversions, made at the first execution on a dialect: a column's may
        depend on the type the driver reports for it (PostgreSQL's numbers), as SQLAlchemy's do."""
        if not self.convert_results:
            return None
        if dialect.name in self._results:
            return self._results[dialect.name]
        columns = getattr(self.statement, "selected_columns", None)
        if columns is None:
            raise TypeError("only a select has result columns to convert")
        types = [entry[1] for entry in cursor.description]
        found = self._results[dialect.name] = tuple(
            column.type.dialect_impl(dialect).result_processor(dialect, type_code)
            for column, type_code in zip(columns, types, strict=True)
        )
        return found


def _row(results: _Conversions, row: Sequence[Any]) -> tuple[Any, ...]:
    if results is None:
        return tuple(row)
    return tuple(
        value if convert is None or value is None else convert(value)
        for convert, value in zip(results, row, strict=True)
    )


def _expanded(compiled: _Compiled, lengths: tuple[int, ...], named: dict[str, Any]) -> _Shape:
    """SQLAlchemy's expansion of the IN lists at these lengths, kept for the next call with the
    same lengths."""
    state = compiled.compiled.construct_expanded_state(named)
    positions = tuple(state.positiontup) if state.positiontup is not None else None
    expansion = {name: list(state.parameter_expansion.get(name, [])) for name in compiled.expanding}
    shape = _Shape(state.statement, positions, expansion)
    if len(compiled.shapes) < _MAX_SHAPES:
        compiled.shapes[lengths] = shape
    return shape


@contextmanager
def raised_as_sqlalchemy(
    dbapi_error: type[Exception], statement: str | Callable[[], str], params: Any
) -> Iterator[None]:
    """Driver errors raised as SQLAlchemy raises them, for the storage errors' answers (503,
    /readyz) and the rollback, which read SQLAlchemy's exceptions. A callable ``statement`` is
    called only when an error is raised: the text of a statement is a compilation, not
    something to pay on every call."""
    try:
        yield
    except dbapi_error as exc:
        text = statement() if callable(statement) else statement
        raise DBAPIError.instance(text, params, exc, dbapi_error) from exc


def _converted(
    processors: Mapping[str, Callable[[Any], Any]], params: dict[str, Any]
) -> dict[str, Any]:
    if not processors:
        return params
    return {
        name: processors[name](value) if name in processors else value
        for name, value in params.items()
    }


class SessionStatement:
    """A DriverQuery bound to the connection of a session's transaction; driver errors come out
    as SQLAlchemy's ``DBAPIError`` (the storage errors' answers and the rollback read them)."""

    __slots__ = ("_db", "_query")

    def __init__(self, query: DriverQuery, db: Session) -> None:
        self._query = query
        self._db = db

    def first_row(self, params: Mapping[str, Any]) -> tuple[Any, ...] | None:
        return self._call(self._query.first_row, params)

    def all_rows(self, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        return self._call(self._query.all_rows, params)

    def run(self, params: Mapping[str, Any]) -> int:
        return self._call(self._query.run, params)

    def run_many(self, rows: Sequence[Mapping[str, Any]]) -> None:
        self._call(self._query.run_many, rows)

    def _call(self, method: Callable[[Any, Dialect, Any], R], params: Any) -> R:
        connection = session_connection(self._db)
        dialect = connection.dialect
        with raised_as_sqlalchemy(dialect.loaded_dbapi.Error, self._query.statement_text, params):
            return method(connection.connection, dialect, params)


_CONNECTION = "driver_query.connection"


def session_connection(db: Session) -> Connection:
    """The connection of the session's transaction, begun (BEGIN IMMEDIATE on SQLite), with the
    session's pending changes flushed first, as the ORM flushes them before a query of its own
    (autoflush): a statement run here sees what the unit of work added. Kept in the session's
    ``info``: a unit of work binds its session to one connection for its life, and asking the
    session for it each time cost more than some statements."""
    if db.autoflush and (db.new or db.dirty or db.deleted):
        db.flush()
    found = db.info.get(_CONNECTION)
    if found is None or found.closed or not found.in_transaction():
        found = db.info[_CONNECTION] = db.connection()
    return cast(Connection, found)
