"""ORM models: one module per aggregate. Importing this package registers every table."""

from app.db.models.agent_session import AgentSession
from app.db.models.api_key import ApiKey
from app.db.models.archive import Archive, ArchiveStatus
from app.db.models.job import Job, JobStatus
from app.db.models.memory import (
    EmbeddingCacheEntry,
    Memory,
    MemoryAudit,
    MemoryChunk,
    MemoryPassageVector,
)
from app.db.models.message import StoredMessage
from app.db.models.message_search import MessageSearch, SessionSearchStats, SessionTerm
from app.db.models.session_hook import SessionHook
from app.db.models.turn_commit import TurnCommit

__all__ = [
    "AgentSession",
    "ApiKey",
    "Archive",
    "ArchiveStatus",
    "EmbeddingCacheEntry",
    "Job",
    "JobStatus",
    "Memory",
    "MemoryAudit",
    "MemoryChunk",
    "MemoryPassageVector",
    "MessageSearch",
    "SessionHook",
    "SessionSearchStats",
    "SessionTerm",
    "StoredMessage",
    "TurnCommit",
]
