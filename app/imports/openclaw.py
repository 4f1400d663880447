"""Reading an OpenClaw transcript store: a state folder, an agent database or JSON Lines files.

The 2026.9 host keeps each agent's transcripts in ``agents/<id>/agent/openclaw-agent.sqlite``,
table ``transcript_events``: one event per row, as JSON text (``event_json``) or as a level-1 zstd
frame of that JSON (``event_zstd``). The database is opened read-only (``mode=ro``): in WAL mode
that reads a consistent snapshot while the host goes on writing, and never blocks it. A session
whose older events the host moved to cold storage (``session_transcript_cold_archives``) is read
from that archive first (a ``.jsonl.zst`` file beside the database, or the row's blob). Older hosts
wrote ``agents/<id>/sessions/<sessionId>.jsonl`` with the same events, one per line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pysqlite3.dbapi2 as sqlite3
import zstandard

from app.imports.lines import Line, json_lines, parse_object
from app.imports.openclaw_events import add_events, session_header
from app.imports.records import Problem, ReadResult, TranscriptSession

AGENT_DB = "openclaw-agent.sqlite"
_EVENTS = (
    "SELECT seq, event_json, event_zstd FROM transcript_events WHERE session_id = ? ORDER BY seq"
)
_MAX_EVENT_BYTES = 64 * 1024 * 1024


def read_openclaw(path: Path) -> ReadResult:
    """Every session under ``path``: a state folder, an agent folder, a database or a .jsonl file."""
    if path.is_file():
        return read_database(path) if _is_sqlite(path) else read_jsonl_file(path)
    result = ReadResult()
    databases = sorted(path.glob(f"**/{AGENT_DB}"))
    for database in databases:
        result.extend(read_database(database))
    for jsonl in sorted(path.glob("**/sessions/*.jsonl")):
        result.extend(read_jsonl_file(jsonl, _agent_of(jsonl.parent.parent)))
    if not databases and not result.sessions and not result.problems:
        result.problems.append(Problem(str(path), 0, "no OpenClaw transcript store found here"))
    return result


def read_database(path: Path) -> ReadResult:
    result = ReadResult()
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        result.problems.append(Problem(str(path), 0, f"cannot open the database: {exc}"))
        return result
    try:
        with db:
            db.execute("BEGIN")  # one snapshot for the whole read, while the host writes on
            agent = _database_agent(db) or _agent_of(path.parent.parent)
            for session_id, key in _sessions(db):
                session = TranscriptSession(session_id, str(path), key, agent)
                add_events(session, _database_events(db, path, session, result.problems))
                result.sessions.append(session)
    except sqlite3.Error as exc:
        result.problems.append(Problem(str(path), 0, f"cannot read the transcripts: {exc}"))
    finally:
        db.close()
    return result


def _sessions(db: sqlite3.Connection) -> list[tuple[str, str | None]]:
    keys: dict[str, str] = {}
    if _has_table(db, "session_windows"):
        keys = dict(db.execute("SELECT session_id, session_key FROM session_windows").fetchall())
    ids = [row[0] for row in db.execute("SELECT DISTINCT session_id FROM transcript_events")]
    if _has_table(db, "session_transcript_cold_archives"):
        ids += [r[0] for r in db.execute("SELECT session_id FROM session_transcript_cold_archives")]
    ordered = sorted(set(ids), key=lambda sid: (_first_time(db, sid), sid))
    return [(sid, keys.get(sid)) for sid in ordered]


def _first_time(db: sqlite3.Connection, session_id: str) -> int:
    row = db.execute(
        "SELECT MIN(created_at) FROM transcript_events WHERE session_id = ?", (session_id,)
    ).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def _database_events(
    db: sqlite3.Connection, path: Path, session: TranscriptSession, problems: list[Problem]
) -> Iterator[Line]:
    source = f"{path}#{session.session_id}"
    last_cold = -1
    for line in _cold_events(db, path, session, problems):
        last_cold = max(last_cold, line.number)
        yield line
    for seq, text, frame in db.execute(_EVENTS, (session.session_id,)):
        if seq <= last_cold:
            continue  # also in the cold archive, read there
        if text is None and frame is not None:
            text = _decompressed(frame, source, seq, problems)
            if text is None:
                continue
        if text is None:
            problems.append(Problem(source, seq, "event without JSON"))
            continue
        value = parse_object(text, source, seq, problems)
        if value is not None:
            yield Line(seq, value)


def _decompressed(frame: bytes, source: str, seq: int, problems: list[Problem]) -> str | None:
    try:
        raw = zstandard.ZstdDecompressor().decompress(frame, max_output_size=_MAX_EVENT_BYTES)
        return raw.decode("utf-8")
    except (zstandard.ZstdError, UnicodeDecodeError) as exc:
        problems.append(Problem(source, seq, f"unreadable compressed event ({exc})"))
        return None


def _cold_events(
    db: sqlite3.Connection, path: Path, session: TranscriptSession, problems: list[Problem]
) -> Iterator[Line]:
    """The events the host moved to cold storage, numbered from 0 as their sequence numbers."""
    if not _has_table(db, "session_transcript_cold_archives"):
        return
    row = db.execute(
        "SELECT archive_name, storage, archive_blob FROM session_transcript_cold_archives "
        "WHERE session_id = ?",
        (session.session_id,),
    ).fetchone()
    if row is None:
        return
    name, storage, blob = row
    cold = path.parent.parent / "sessions" / "cold" / name if path.parent.name == "agent" else None
    cold = cold or path.parent / "cold" / name
    source = str(cold) if storage == "file" else f"{path}#{session.session_id}:cold"
    try:
        packed = blob if storage == "sqlite" else cold.read_bytes()
        text = zstandard.ZstdDecompressor().decompressobj().decompress(packed).decode("utf-8")
    except (OSError, zstandard.ZstdError, UnicodeDecodeError) as exc:
        problems.append(Problem(source, 0, f"cannot read the cold transcript archive: {exc}"))
        return
    yield from json_lines(text.splitlines(), source, problems, first_line=0)


def read_jsonl_file(path: Path, agent_id: str | None = None) -> ReadResult:
    """A session file of an older host: a ``session`` header line, then its events."""
    result = ReadResult()
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            lines = list(json_lines(handle, str(path), result.problems))
    except OSError as exc:
        result.problems.append(Problem(str(path), 0, f"cannot read: {exc.strerror}"))
        return result
    header = next((session_header(line.value) for line in lines[:1]), None)
    session = TranscriptSession(header or path.stem, str(path), None, agent_id)
    session.session_key = _jsonl_session_key(path, session.session_id)
    add_events(session, lines)
    result.sessions.append(session)
    return result


def _jsonl_session_key(path: Path, session_id: str) -> str | None:
    """The key of a session in the ``sessions.json`` index beside older hosts' session files."""
    index = path.parent / "sessions.json"
    try:
        entries = json.loads(index.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(entries, dict):
        return None
    for key, entry in entries.items():
        if isinstance(entry, dict) and entry.get("sessionId") == session_id:
            return str(key)
    return None


def _database_agent(db: sqlite3.Connection) -> str | None:
    if not _has_table(db, "schema_meta"):
        return None
    row = db.execute("SELECT agent_id FROM schema_meta WHERE agent_id IS NOT NULL").fetchone()
    return str(row[0]) if row and row[0] else None


def _agent_of(folder: Path) -> str | None:
    """``<id>`` of an ``agents/<id>/`` folder."""
    return folder.name if folder.parent.name == "agents" else None


def _has_table(db: sqlite3.Connection, name: str) -> bool:
    found = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
    return found.fetchone() is not None


def _is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False
