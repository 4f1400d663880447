"""A session's archives by primary key, read as a search names them.

Keyword search needs the archives of its hits only (a hit carries its archive's id); reading all
of a session's archives first cost 6.5 ms a search at a hundred archives, most of the search of a
rare term. Whatever iterates the mapping (ranked search's statistics, for one) reads them all,
once.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from sqlalchemy.orm import Session

from app.archives import repository as repo
from app.db.models import AgentSession, Archive


class ArchivesOnDemand(Mapping[int, Archive]):
    """The session's archives (long texts deferred), each read when first asked for."""

    def __init__(self, db: Session, session: AgentSession) -> None:
        self._db = db
        self._session = session
        self._read: dict[int, Archive] = {}
        self._complete = False

    def __getitem__(self, archive_pk: int) -> Archive:
        found = self._read.get(archive_pk)
        if found is None and not self._complete:
            found = repo.session_archive(self._db, self._session, archive_pk)
            if found is not None:
                self._read[archive_pk] = found
        if found is None:
            raise KeyError(archive_pk)
        return found

    def __iter__(self) -> Iterator[int]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def _all(self) -> dict[int, Archive]:
        if not self._complete:
            listed = repo.list_archives(self._db, self._session, texts=False)
            self._read = {archive.id: archive for archive in listed}
            self._complete = True
        return self._read
