"""SQLite's storage seams: FTS5 (trigram and unicode61) word indexes, sqlite-vec vectors searched
through in-process matrices, and the database's one write lock."""
