"""Copying a SQLite database into PostgreSQL, and verifying the copy (``context-engine copy``)."""
