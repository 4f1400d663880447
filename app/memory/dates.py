"""Relative dates for memory extraction: the shared resolver lives in ``app.core.dates`` (search
uses it too)."""

from __future__ import annotations

from app.core.dates import resolve_relative_date

__all__ = ["resolve_relative_date"]
