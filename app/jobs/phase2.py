"""Phase 2 of a commit: the archive pipeline (docs/lifecycle.md, Phase 2).

index the archive's message text (one short transaction) → read inputs (another) → build the
Working Memory (no transaction open) → write the results and mark the archive completed, last,
in one transaction.

The builders, the model and the learning step see the archived messages through the redaction
boundary, and the Working Memory is redacted once more before it is stored: the overview is
indexed, searched and injected into every later prompt (docs/quality.md, Security).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import structlog
from sqlalchemy.orm import Session

from app.archives.index import text_index
from app.archives.index.search_index import (
    MessageVectors,
    PassageEmbedder,
    SearchFact,
    embed_facts,
    facts_of,
    write_search_index,
)
from app.archives.read import store as archives_store
from app.core.canonical_json import decode_many
from app.core.clock import isoformat, utcnow
from app.core.rules.redaction import redact_message, redact_text
from app.core.threads import to_thread
from app.db.uow import UnitOfWork
from app.jobs import repository as queue
from app.jobs.repository import ClaimedJob
from app.providers.protocols import ProviderError
from app.working_memory.service import WmInputs, WmResult, WorkingMemoryBuilder, finish_result

log = structlog.get_logger("app.jobs.phase2")


class JobLost(Exception):
    """The job's lease passed to another worker; our results must not be written."""


@dataclass(frozen=True, slots=True)
class ArchiveContext:
    """What the learning step needs besides the Working Memory inputs."""

    tenant_id: str
    user_id: str
    agent_id: str
    session_id: str
    archive_id: str
    seqs: list[int]
    message_time: str


# (archive context, Working Memory inputs, new Working Memory) -> (counts per category, usage)
Learner = Callable[
    [ArchiveContext, WmInputs, str], Awaitable[tuple[dict[str, int], dict[str, Any]]]
]


@dataclass(frozen=True, slots=True)
class Phase2Context:
    uow: UnitOfWork
    builder: WorkingMemoryBuilder
    worker_id: str
    fault_delay_s: float = 0.0
    learn: Learner | None = None
    embed: PassageEmbedder | None = None
    embed_model: str | None = None


@dataclass(frozen=True, slots=True)
class SearchIndex:
    """Archived messages' search facts and vectors, written with the results."""

    facts: list[SearchFact]
    vectors: dict[int, MessageVectors]


async def run_phase2(ctx: Phase2Context, job: ClaimedJob) -> WmResult:
    """Process one claimed archive job end to end."""
    await to_thread(_index_text, ctx.uow, job)
    inputs, archive, facts = await to_thread(_load_inputs, ctx.uow, job)
    if ctx.fault_delay_s:
        await asyncio.sleep(ctx.fault_delay_s)
    result = await to_thread(_redacted_result, await ctx.builder.build(inputs))
    memories: dict[str, Any] = {}
    if ctx.learn is not None:
        memories = await _learn(ctx.learn, archive, inputs, result)
    index = SearchIndex(facts, await _vectors(ctx, archive, facts))
    await to_thread(_write_results, ctx, job, result, memories, index)
    return result


def _index_text(uow: UnitOfWork, job: ClaimedJob) -> None:
    """First, and whatever the model does later: the archive's messages enter the text index that
    archive search reads (app.archives.index.text_index; a search may have done it already)."""
    with uow.write() as db:
        text_index.index_archive_messages(db, uow.storage, [job.archive_pk])


async def _vectors(
    ctx: Phase2Context, archive: ArchiveContext, facts: list[SearchFact]
) -> dict[int, MessageVectors]:
    """Phase 2 step 4: vectors of the archived messages. A failure costs ranked search its vector
    side for these messages (lexical search still finds them), never the archive."""
    if ctx.embed is None:
        return {}
    try:
        return await embed_facts(ctx.embed, facts)
    except ProviderError as exc:
        log.warning("message_embedding_failed", archive_id=archive.archive_id, error=str(exc))
        return {}


async def _learn(
    learn: Learner, archive: ArchiveContext, inputs: WmInputs, result: WmResult
) -> dict[str, Any]:
    """Phase 2 step 3. A model failure here loses no message and does not fail the archive."""
    try:
        counts, usage = await learn(archive, inputs, result.overview)
    except ProviderError as exc:
        log.warning("memory_extraction_failed", archive_id=archive.archive_id, error=str(exc))
        return {"counts": {}, "error": str(exc)[:500]}
    return {"counts": counts, "usage": usage}


def _redacted_result(result: WmResult) -> WmResult:
    """The Working Memory as it may be stored: a model can echo a secret it was never shown."""
    overview = redact_text(result.overview)
    return (
        result
        if overview == result.overview
        else finish_result(overview, result.path, result.usage)
    )


def _load_inputs(
    uow: UnitOfWork, job: ClaimedJob
) -> tuple[WmInputs, ArchiveContext, list[SearchFact]]:
    bodies, inputs, context, facts = _read_inputs(uow, job)
    # Parsing and redaction after the read transaction has ended (bodies that held a secret come
    # redacted already; redacting again also covers messages stored before redacted copies were).
    return (
        WmInputs(
            messages=[redact_message(message) for message in decode_many(bodies)],
            prior_overview=inputs.prior_overview,
            first_user_request=inputs.first_user_request,
            custom_instructions=redact_text(inputs.custom_instructions)
            if inputs.custom_instructions
            else None,
        ),
        context,
        facts,
    )


def _read_inputs(
    uow: UnitOfWork, job: ClaimedJob
) -> tuple[list[str], WmInputs, ArchiveContext, list[SearchFact]]:
    """The archive's message bodies (JSON text, as stored), the other inputs, the context and the
    messages' search facts (from their redacted search text)."""
    with uow.read() as db:
        archive = archives_store.get_archive_by_pk(db, job.archive_pk)
        if archive is None:
            raise JobLost(f"archive {job.archive_pk} is gone")
        rows = archives_store.archive_messages(db, archive)
        prior = archives_store.latest_completed_before(db, job.session_pk, job.archive_index)
        first_user = queue.first_user_request(db, job.session_pk)
        session = queue.job_session(db, job.session_pk)
        inputs = WmInputs(
            messages=[],
            prior_overview=prior.overview if prior is not None else None,
            first_user_request=first_user,
            custom_instructions=archive.custom_instructions,
        )
        context = ArchiveContext(
            tenant_id=job.tenant_id,
            user_id=session.user_id if session else "default",
            agent_id=session.agent_id if session else "main",
            session_id=session.session_id if session else "",
            archive_id=archive.archive_id,
            seqs=[row.seq for row in rows],
            message_time=isoformat(archive.ended_at or archive.created_at) or "",
        )
        return [row.redacted_body or row.body for row in rows], inputs, context, facts_of(rows)


def _write_results(
    ctx: Phase2Context,
    job: ClaimedJob,
    result: WmResult,
    memories: dict[str, Any],
    index: SearchIndex,
) -> None:
    now = utcnow()
    with ctx.uow.write() as db:
        if not queue.still_owned(db, job.job_id, ctx.worker_id):
            raise JobLost(f"job {job.job_id} is no longer held by {ctx.worker_id}")
        archive = archives_store.get_archive_by_pk(db, job.archive_pk)
        if archive is None:
            raise JobLost(f"archive {job.archive_pk} is gone")
        archives_store.record_working_memory(
            archive,
            overview=result.overview,
            abstract=result.abstract,
            overview_tokens=result.overview_tokens,
            path=result.path,
            usage=result.usage,
            memories=memories,
        )
        ctx.uow.storage.text.index_archive_overview(db, archive.id, result.overview)
        write_search_index(db, ctx.uow.storage, index.facts, index.vectors, ctx.embed_model)
        _add_usage(db, job.session_pk, result)
        queue.mark_succeeded(db, job.job_id, now)
        # Completed last, in the same transaction as the results: readers see all or nothing.
        archives_store.mark_completed(archive, now)


def _add_usage(db: Session, session_pk: int, result: WmResult) -> None:
    session = queue.job_session(db, session_pk)
    if session is None:
        return
    session.llm_prompt_tokens += int(result.usage.get("prompt_tokens", 0) or 0)
    session.llm_completion_tokens += int(result.usage.get("completion_tokens", 0) or 0)
