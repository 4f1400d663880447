"""What the SQLite and PostgreSQL storage share: the rows the seams return, the pipelines written
once over each backend's row readers, and the SQL that is the same on both."""
