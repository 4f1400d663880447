"""One-row reads on the driver's connection, with SQL that SQLAlchemy compiled once per database.

Every request resolves its API key before anything else, with a read of a few index probes. Through
SQLAlchemy (a session, the compiled-statement cache, parameter and result processing) that read
cost about 150 µs of CPU; SQLite answers it in about 10. A DriverQuery compiles its Core statement
once per dialect and runs the SQL on a pooled DBAPI connection: about 13 µs in all.

Only for statements whose parameters need no conversion on the way in (strings, integers): that
is checked when the statement compiles. Rows come back as the driver reads them, without
SQLAlchemy's result conversion (an ``EXISTS`` is 0 or 1 on SQLite, a bool on PostgreSQL).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Dialect
from sqlalchemy.sql import Select


@dataclass(frozen=True, slots=True)
class _Compiled:
    sql: str
    positions: tuple[str, ...] | None  # parameter names in placeholder order (qmark); None: named
    values: dict[str, Any]  # the statement's own bound values (literals), under the caller's


class DriverQuery:
    """A Core select compiled once per dialect, to be run with ``UnitOfWork.driver_row``."""

    def __init__(self, statement: Select[Any]) -> None:
        self.statement = statement
        self._compiled: dict[str, _Compiled] = {}

    @property
    def statement_text(self) -> str:
        """The statement, for error messages."""
        return str(self.statement)

    def first_row(
        self, connection: Any, dialect: Dialect, params: Mapping[str, Any]
    ) -> tuple[Any, ...] | None:
        """The first row of the statement on a DBAPI connection, or None."""
        compiled = self._compiled.get(dialect.name) or self._compile(dialect)
        named = {**compiled.values, **params}
        values: Any = (
            named if compiled.positions is None else [named[name] for name in compiled.positions]
        )
        cursor = connection.cursor()
        try:
            cursor.execute(compiled.sql, values)
            row = cursor.fetchone()
        finally:
            cursor.close()
        return None if row is None else tuple(row)

    def _compile(self, dialect: Dialect) -> _Compiled:
        compiled = self.statement.compile(dialect=dialect)
        for bind in compiled.binds.values():
            if bind.type.bind_processor(dialect) is not None:
                raise TypeError(
                    f"parameter {bind.key!r} ({bind.type}) needs conversion: use a session"
                )
        positions = tuple(compiled.positiontup or ()) if compiled.positional else None
        found = _Compiled(compiled.string, positions, dict(compiled.params))
        self._compiled[dialect.name] = found
        return found
