"""Mapped objects loaded by statements that run on the driver (app/db/driver_query.py).

The ORM's own load of one row (a session, an archive) costs about a tenth of a stored turn's
CPU, a tenth of an archive search's. A ``DriverLoad`` selects the entity's columns with a
``DriverQuery`` and attaches each row to the session as a query would: an object the session
already holds is returned as it is (the ORM does not overwrite it either), a new one joins the
session as persistent, its later changes flushed at commit. Columns left out (``deferred``) are
expired, so the first access reads them, as a deferred column of the ORM does.

The ORM flushes pending changes before a query (autoflush); every statement on the session's
connection does the same (``driver_query.session_connection``), so a row added or changed
earlier in the transaction is found as it now is.

A load made with ``attach=False`` is for objects that are only read: a new one stays out of the
session (adding it walks the save cascade, about a third of the load, and closing the session
detaches every object it holds, as much again), so a change made to it is never written; an
object the session already holds is still returned as it is. Its deferred columns cannot be
read: it is made detached, so reading one raises ``DetachedInstanceError`` rather than answering
None.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Generic, TypeVar, cast

from sqlalchemy import ColumnElement, select
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.orm import InstrumentedAttribute, Session, make_transient_to_detached
from sqlalchemy.orm.attributes import instance_state
from sqlalchemy.orm.util import identity_key

from app.db.driver_query import DriverQuery

T = TypeVar("T")


class DriverLoad(Generic[T]):
    """``entity`` rows matching ``where`` (in ``order_by`` order), as mapped objects of ``db``.
    ``leading`` columns (of a table ``where`` joins, or any column expression: an EXISTS) are
    selected before the entity's own and come back beside each object (``all_led``)."""

    def __init__(
        self,
        entity: type[T],
        where: ColumnElement[bool],
        *,
        order_by: Sequence[ColumnElement[Any] | InstrumentedAttribute[Any]] = (),
        deferred: Sequence[InstrumentedAttribute[Any]] = (),
        leading: Sequence[ColumnElement[Any] | InstrumentedAttribute[Any]] = (),
        attach: bool = True,
    ) -> None:
        self.entity = entity
        self._leading = len(leading)
        self._attach = attach
        self._deferred = bool(deferred)
        mapper = sa_inspect(entity)
        left_out = {attribute.key for attribute in deferred}
        self._keys = [prop.key for prop in mapper.column_attrs if prop.key not in left_out]
        self._manager = mapper.class_manager
        self._primary_keys = [mapper.get_property_by_column(c).key for c in mapper.primary_key]
        missing = set(self._primary_keys).difference(self._keys)
        if missing:
            raise ValueError(f"a primary key cannot be deferred: {sorted(missing)}")
        columns = (getattr(entity, key) for key in self._keys)
        statement = select(*leading, *columns).where(where)
        self._query = DriverQuery(statement.order_by(*order_by), convert_results=True)

    def first(self, db: Session, params: Mapping[str, Any]) -> T | None:
        row = self._query.in_session(db).first_row(params)
        return None if row is None else self._attached(db, row[self._leading :])

    def all(self, db: Session, params: Mapping[str, Any]) -> list[T]:
        return [loaded for _, loaded in self.all_led(db, params)]

    def all_led(self, db: Session, params: Mapping[str, Any]) -> list[tuple[tuple[Any, ...], T]]:
        """Each row's leading columns and its object (one object for rows of the same entity)."""
        lead = self._leading
        rows = self._query.in_session(db).all_rows(params)
        return [(row[:lead], self._attached(db, row[lead:])) for row in rows]

    def _attached(self, db: Session, row: tuple[Any, ...]) -> T:
        values = dict(zip(self._keys, row, strict=True))
        key = identity_key(self.entity, tuple(values[k] for k in self._primary_keys))
        held = db.identity_map.get(key)
        if held is not None:
            return held
        # As the ORM's loader fills an object: its dictionary, without the constructor or the
        # attribute events (they were two thirds of the load).
        loaded = self._manager.new_instance()
        instance_state(loaded).dict.update(values)
        if self._attach or self._deferred:
            make_transient_to_detached(loaded)  # the columns not given are expired: read on access
        if self._attach:
            db.add(loaded)  # walking the save cascade, about a third of the load
        return cast(T, loaded)
