"""PostgreSQL's storage seams: pg_trgm substring indexes, a tsvector word index, pgvector
vectors, advisory locks of sessions."""
