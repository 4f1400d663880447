"""Memory search (docs/recall.md, Hybrid search) over 1k → 10k → 100k chunks in ONE user's partition.

In process, no HTTP: ``search_memories(service, caller, SearchInput(query))`` with the defaults of
``POST /memories/search`` (hybrid, limit 10, no threshold, the caller's user and agent as owners).

- *no embedding* (the docs/quality.md row): the service's embedder is ``FixedVectors``, a stand-in that
  returns a precomputed unit vector for each query text, so everything after the query embedding
  is timed (the read transaction, the word side's BM25 over its postings, the KNN over the partition, loading the
  candidate rows, the merge, decay, MMR and the response dicts) and nothing before it.
- *+ query embedding*: the service's real ``CachedEmbedder(LocalE5Embedder)``; every query text is
  new, so each call pays the model, the cache lookup and the cache write.

Building 100k vectors with the model would take hours on 2 cores, so the corpus is synthetic:
template memories (preferences, entities, events, cases; ~15% Chinese; hostnames, error codes,
dates) with normalised random 384-d vectors, bulk-inserted into a migrated SQLite file: memory and
chunk rows with SQLAlchemy ``insert`` (one chunk per memory), the word index and the vectors through
the dialect's ``index_memory_chunks`` and ``store_chunk_vectors``, and each memory's passage vectors
(near its own) into ``memory_passage_vectors``, which the search reads for its nearest chunks. Random vectors make the KNN
side's cost realistic (the vec0 scan reads every vector of the partition whatever they hold), not
its scores. ``bench/recall.py`` reuses the builder with vectors near real embeddings.
"""

from __future__ import annotations

import asyncio
import gc
import random
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
from sqlalchemy import Engine, event, func, insert, select, text
from sqlalchemy.exc import OperationalError

from app.core.clock import utcnow
from app.core.vector_matrix import float32_bytes
from app.db.engine import create_db_engine
from app.db.models import Memory, MemoryChunk, MemoryPassageVector
from app.db.sqlite.memory_vectors import SqliteMemoryVectors
from app.db.sqlite.memory_words import MEMORY_FTS
from app.db.sqlite.vector_cache import VectorCache
from app.db.uow import UnitOfWork
from app.memory.records import memory_uri, one_line, owner_key
from app.memory.search.hybrid import SearchInput, _collect, _rank, search_memories
from app.memory.service import Caller, MemoryService
from app.memory.store.embedding_cache import CachedEmbedder
from app.memory.store.writes import index_text
from app.providers.embeddings import LOCAL_DIMENSIONS, LOCAL_MODEL_ID, LocalE5Embedder
from app.search.text.memory_phrases import memory_phrases
from app.search.text.passages import message_passages
from app.search.text.query import parse_query
from app.search.text.words import chunks_with_words
from app.settings import Settings
from bench.common import Config, Row, fmt_ms, migrated_db, percentile, summary, temp_dir

TENANT = "default"
USER = "bench-user"
NEIGHBOUR = "bench-neighbour"
AGENT = "main"
TARGET_P95_MS = 40
INSERT_BATCH = 5000
NEIGHBOUR_SIZE = 1000
PLANTED_CODE = "E_VAULT_7731"  # in exactly PLANTED_COUNT memories of the user, whatever the size
PLANTED_COUNT = 5

# (label, query) timed in rotation for the no-embedding figure.
QUERIES = [
    ("paraphrase", "which editor does the user prefer for Python work"),
    ("identifier", f"what happened with {PLANTED_CODE}"),
    ("event", "why did the billing deploy fail last week"),
    ("chinese", "支付服务部署失败的错误码"),
]

# --------------------------------------------------------------------------- synthetic memories

_SERVICES = [
    "billing",
    "checkout",
    "auth",
    "search",
    "payments",
    "inventory",
    "notifications",
    "reporting",
    "gateway",
    "scheduler",
    "ledger",
    "catalog",
    "shipping",
    "analytics",
    "webhooks",
    "exports",
]
_SERVICES_ZH = [
    "支付服务",
    "订单服务",
    "用户中心",
    "搜索服务",
    "消息推送",
    "报表系统",
    "网关",
    "库存服务",
]
_PEOPLE = [
    "Alice Chen",
    "Bob Martin",
    "Carla Diaz",
    "Deepak Rao",
    "Elena Petrova",
    "Farid Haddad",
    "Grace Kim",
    "Hiro Tanaka",
    "Ines Duarte",
    "Jonas Weber",
    "Kemi Adeyemi",
    "Liu Yang",
    "Marta Nowak",
    "Nadia Hassan",
    "Omar Farouk",
    "Priya Nair",
]
_PEOPLE_ZH = ["王磊", "李娜", "张伟", "陈静", "刘洋", "赵敏"]
_TEAMS = ["platform", "payments", "growth", "data", "infra", "mobile", "security", "search"]
_TEAMS_ZH = ["基础架构", "支付", "数据平台", "移动端", "安全"]
_ROLES = [
    "tech lead",
    "on-call owner",
    "product manager",
    "SRE",
    "staff engineer",
    "engineering manager",
]
_TOOL_PAIRS = [
    ("neovim", "VS Code"),
    ("pytest", "unittest"),
    ("ruff", "flake8"),
    ("uv", "pip"),
    ("tmux", "screen"),
    ("fish", "bash"),
    ("Postgres", "MySQL"),
    ("Terraform", "Pulumi"),
    ("ripgrep", "grep"),
    ("Docker Compose", "Kubernetes"),
    ("JetBrains PyCharm", "Sublime Text"),
    ("httpx", "requests"),
]
_TASKS = [
    "Python work",
    "code review",
    "infrastructure changes",
    "quick scripts",
    "data analysis",
    "debugging",
    "writing docs",
    "database migrations",
]
_STYLES = [
    "short bullet points",
    "code first and the explanation after",
    "no emojis",
    "British spelling",
    "links to the official docs",
    "a one-line summary at the top",
]
_CAUSES = [
    ("a missing index on the orders table", "adding the index"),
    ("an expired TLS certificate", "rotating the certificate"),
    ("a race in the retry loop", "serialising the retries"),
    ("a wrong timezone in the cron schedule", "switching the schedule to UTC"),
    ("a connection pool that was too small", "raising the pool size to 50"),
    ("a stale feature flag", "removing the flag"),
    ("an unpinned dependency upgrade", "pinning the dependency"),
    ("DNS caching in the sidecar", "lowering the DNS TTL"),
]
_CAUSES_ZH = [
    ("数据库连接池耗尽", "把连接池调大"),
    ("证书过期", "更新证书"),
    ("配置文件写错了", "回滚配置"),
    ("磁盘空间不足", "清理日志"),
    ("缓存没有失效", "手动刷新缓存"),
]
_TASKS_ZH = ["写单元测试", "做代码评审", "整理周报", "排查线上问题", "写部署脚本"]
_STYLES_ZH = ["先给结论", "用中文回答", "代码加注释", "少用术语"]
_LANGS = ["Python", "Go", "TypeScript", "Rust", "Java", "Kotlin"]
_REGIONS = ["eu-west-1", "us-east-2", "ap-southeast-1", "cn-north-1"]
_HOST_PREFIXES = ["web", "db", "cache", "worker", "api", "queue", "edge", "batch"]
_ENVS = ["prod", "staging", "dev"]
_BASE_DATE = date(2025, 1, 6)


@dataclass(frozen=True, slots=True)
class SyntheticMemory:
    category: str
    title: str
    content: str
    days_ago: float | None = None  # events and cases: when it happened (observedAt)


def _host(rng: random.Random) -> str:
    return f"{rng.choice(_HOST_PREFIXES)}-{rng.randint(1, 9999):04d}.{rng.choice(_ENVS)}.internal"


def _code(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.4:
        return f"E{rng.randint(1000, 9999)}"
    if kind < 0.7:
        return f"HTTP {rng.choice([429, 500, 502, 503, 504])}"
    return f"ERR_{rng.choice(['TIMEOUT', 'QUOTA', 'LOCKED', 'SCHEMA', 'AUTH'])}_{rng.randint(1, 999):03d}"


def _day(rng: random.Random) -> date:
    return _BASE_DATE + timedelta(days=rng.randint(0, 420))


def synthetic_memory(topic: int, rng: random.Random, code: str | None = None) -> SyntheticMemory:
    """One user memory: the ``topic`` fixes the template and its subject words, ``rng`` the details
    (hosts, codes, dates, numbers); ``code`` forces the error code of an event."""
    t = random.Random(topic * 7919 + 17)
    kind = t.randrange(10) if code is None else 4
    svc, person, team = t.choice(_SERVICES), t.choice(_PEOPLE), t.choice(_TEAMS)
    days_ago = rng.uniform(1, 400)
    if kind == 0:
        good, bad = t.choice(_TOOL_PAIRS)
        task, style = t.choice(_TASKS), t.choice(_STYLES)
        return SyntheticMemory(
            "preferences",
            f"Prefers {good} for {task}",
            f"The user prefers {good} over {bad} for {task} and wants answers with {style}.",
        )
    if kind == 1:
        task, style = t.choice(_TASKS_ZH), t.choice(_STYLES_ZH)
        return SyntheticMemory(
            "preferences",
            f"偏好：{task}",
            f"用户{task}时喜欢{style}，不喜欢长篇大论；偏好在 {rng.choice(_REGIONS)} 的环境里测试。",
        )
    if kind == 2:
        return SyntheticMemory(
            "entities",
            f"{person} ({team})",
            f"{person} is the {t.choice(_ROLES)} of the {team} team and owns the {svc} service; "
            f"escalations go to #{team}-oncall.",
        )
    if kind == 3:
        host = _host(rng)
        return SyntheticMemory(
            "entities",
            f"Host {host}",
            f"Host {host} runs the {svc} service in {rng.choice(_REGIONS)}; it has {rng.choice([8, 16, 32, 64])} GB "
            f"of memory and is patched every {t.choice(['Monday', 'Wednesday', 'Friday'])}.",
        )
    if kind == 4:
        when, host, err = _day(rng), _host(rng), code or _code(rng)
        return SyntheticMemory(
            "events",
            f"{svc} deploy failed on {when.isoformat()}",
            f"On {when.isoformat()} the {svc} deploy to {host} failed with {err}; "
            f"it was rolled back after {rng.randint(3, 90)} minutes.",
            days_ago,
        )
    if kind == 5:
        when, host, svc_zh = _day(rng), _host(rng), t.choice(_SERVICES_ZH)
        return SyntheticMemory(
            "events",
            f"{svc_zh}部署失败",
            f"{when.year}年{when.month}月{when.day}日，{svc_zh}在 {host} 上部署失败，错误码 {_code(rng)}，"
            f"{rng.randint(3, 90)} 分钟后回滚。",
            days_ago,
        )
    if kind == 6:
        old, new = t.sample(_LANGS, 2)
        return SyntheticMemory(
            "events",
            f"Migrated {svc} to {new}",
            f"In {_day(rng).strftime('%B %Y')} the user's team migrated the {svc} service from {old} to {new}; "
            f"{person} reviewed the rollout.",
            days_ago,
        )
    if kind == 7:
        cause, fix = t.choice(_CAUSES)
        return SyntheticMemory(
            "cases",
            f"{svc}: {_code(rng)} on {_host(rng)}",
            f"Case: the {svc} service returned errors because of {cause}; fixed by {fix}. "
            f"Seen on {_host(rng)} with {_code(rng)}.",
            days_ago,
        )
    if kind == 8:
        cause, fix = t.choice(_CAUSES_ZH)
        return SyntheticMemory(
            "cases",
            f"{t.choice(_SERVICES_ZH)}故障",
            f"{t.choice(_SERVICES_ZH)}报错的原因是{cause}，解决办法是{fix}。主机 {_host(rng)}。",
            days_ago,
        )
    person_zh, team_zh = t.choice(_PEOPLE_ZH), t.choice(_TEAMS_ZH)
    return SyntheticMemory(
        "entities",
        f"{person_zh}（{team_zh}）",
        f"{person_zh}是{team_zh}团队的负责人，负责 {svc} 服务，值班时优先联系。",
    )


def synthetic_experience(topic: int, rng: random.Random) -> SyntheticMemory:
    """One agent experience in the three-section format (docs/recall.md, Memory records)."""
    t = random.Random(topic * 104729 + 3)
    svc = t.choice(_SERVICES)
    cause, fix = t.choice(_CAUSES)
    kind = t.randrange(4)
    if kind == 0:
        title = f"Deploying {svc} with a database migration"
        situation = f"Deploying the {svc} service while a schema migration is pending"
        approach = [
            f"Run the migration on a staging copy first ({_host(rng)})",
            "Deploy behind a feature flag",
            "Watch the error rate for 10 minutes before widening",
        ]
        reflect = [
            f"A previous rollout failed because of {cause}",
            "Always keep the rollback command ready",
        ]
    elif kind == 1:
        title = f"Debugging flaky {svc} tests"
        situation = f"The {svc} test suite fails intermittently on CI"
        approach = [
            "Re-run the failing test alone with -p no:randomly",
            f"Check for {cause}",
            "Add the missing await or lock",
        ]
        reflect = [f"The real fix was {fix}", "Do not just add retries to the test"]
    elif kind == 2:
        title = f"Rotating credentials for {svc}"
        situation = f"Credentials of the {svc} service expire or leak"
        approach = [
            "Create the new secret in the vault",
            "Roll the pods one by one",
            "Revoke the old secret last",
        ]
        reflect = [f"Last time {_code(rng)} appeared because the old secret was revoked first"]
    else:
        title = f"修复{t.choice(_SERVICES_ZH)}超时"
        situation = "线上接口超时，错误码 " + _code(rng)
        approach = ["先看网关日志", "检查数据库慢查询", f"确认{t.choice(_CAUSES_ZH)[0]}"]
        reflect = ["不要直接重启服务", "修复后补充监控告警"]
    content = (
        "## Situation\n"
        + f"- {situation}\n"
        + "## Approach\n"
        + "".join(f"- {step}\n" for step in approach)
        + "## Reflect\n"
        + "".join(f"- {line}\n" for line in reflect)
    )
    return SyntheticMemory("experiences", title, content.rstrip("\n"))


def user_corpus(
    count: int, seed: int, topics: int | None = None, planted: int = 0
) -> tuple[list[SyntheticMemory], list[int]]:
    """``count`` user memories and the topic of each; ``topics`` limits the distinct topics (None:
    every memory its own); ``planted`` memories, evenly spread, carry ``PLANTED_CODE``."""
    rng = random.Random(seed)
    planted_at = {round((i + 0.5) * count / planted) for i in range(planted)} if planted else set()
    items: list[SyntheticMemory] = []
    topic_ids: list[int] = []
    for i in range(count):
        topic = rng.randrange(topics) if topics else rng.randrange(1 << 30)
        items.append(synthetic_memory(topic, rng, PLANTED_CODE if i in planted_at else None))
        topic_ids.append(topic)
    return items, topic_ids


# --------------------------------------------------------------------------- vectors and inserts


def random_unit_vectors(count: int, rng: np.random.Generator) -> np.ndarray:
    matrix = rng.standard_normal((count, LOCAL_DIMENSIONS), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix


def near_vectors(
    prototypes: np.ndarray, topic_ids: list[int], rng: np.random.Generator, sigma: float = 0.017
) -> np.ndarray:
    """Unit vectors around the prototype of each topic (cosine about 0.95 to it at the default)."""
    matrix = prototypes[np.asarray(topic_ids)] + rng.normal(
        0.0, sigma, (len(topic_ids), prototypes.shape[1])
    ).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix


def insert_memories(
    uow: UnitOfWork,
    owner: tuple[str, str],
    items: list[SyntheticMemory],
    vectors: np.ndarray,
    rng: random.Random,
    now: datetime,
) -> None:
    """Bulk insert: memory and chunk rows, the word index and the vectors (passages' too),
    ``INSERT_BATCH`` a transaction."""
    partition = owner_key(TENANT, owner)
    noise_rng = np.random.default_rng(rng.getrandbits(32))
    for start in range(0, len(items), INSERT_BATCH):
        with uow.write() as db:
            next_id = (db.execute(select(func.max(MemoryChunk.id))).scalar() or 0) + 1
            memories, chunks, words, vecs, passages = [], [], [], [], []
            for offset, item in enumerate(items[start : start + INSERT_BATCH]):
                memory_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
                chunk_id = next_id + offset
                created = now - timedelta(days=rng.uniform(0, 400))
                memories.append(
                    {
                        "id": memory_id,
                        "tenant_id": TENANT,
                        "owner_kind": owner[0],
                        "owner_id": owner[1],
                        "uri": memory_uri(item.category, owner, item.title, memory_id),
                        "category": item.category,
                        "title": item.title,
                        "abstract": one_line(item.content),
                        "content": item.content,
                        "confidence": 1.0,
                        "sensitivity": "allowed",
                        "priority": 0,
                        "version": 1,
                        "source_json": '{"kind": "api"}',
                        "embedding_model": LOCAL_MODEL_ID,
                        "superseded_by": None,
                        "expires_at": None,
                        "observed_at": now - timedelta(days=item.days_ago)
                        if item.days_ago is not None
                        else None,
                        "created_at": created,
                        "updated_at": created,
                    }
                )
                chunks.append(
                    {
                        "id": chunk_id,
                        "tenant_id": TENANT,
                        "memory_id": memory_id,
                        "chunk_index": 0,
                        "text": item.content,
                        "embedding_model": LOCAL_MODEL_ID,
                    }
                )
                # index_text reads the memory's title and the times its days are resolved against
                row = memories[-1]
                view = SimpleNamespace(
                    title=item.title, observed_at=row["observed_at"], created_at=row["created_at"]
                )
                words.append((chunk_id, partition, index_text(view, item.content)))  # type: ignore[arg-type]
                vecs.append((chunk_id, partition, vectors[start + offset].tolist()))
                # Its passages' vectors, near its own, as memory search reads them for its nearest
                # chunks (app/search/text/passages.py).
                texts = message_passages(item.content)
                noise = noise_rng.normal(0, 0.02, size=(len(texts), vectors.shape[1]))
                for index, row in enumerate(noise):
                    passage = vectors[start + offset] + row
                    passages.append(
                        {
                            "chunk_id": chunk_id,
                            "passage_index": index,
                            "tenant_id": TENANT,
                            "embedding": float32_bytes(list(passage / np.linalg.norm(passage))),
                        }
                    )
            db.execute(insert(Memory), memories)
            db.execute(insert(MemoryChunk), chunks)
            if passages:
                db.execute(insert(MemoryPassageVector), passages)
            uow.storage.memory_words.index_memory_chunks(db, chunks_with_words(words))
            uow.storage.memory_vectors.store_chunk_vectors(db, vecs)


def open_uow(path: Path, *, build: bool = False) -> UnitOfWork:
    """A unit of work on ``path``: the service's settings, or ``synchronous=NORMAL`` to build."""
    settings = Settings(
        database_url=f"sqlite:///{path}",
        **({"db": {"sqlite_synchronous": "NORMAL"}} if build else {}),
    )
    return UnitOfWork(create_db_engine(settings))


def checkpoint(uow: UnitOfWork) -> None:
    with uow.engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")


# --------------------------------------------------------------------------- measuring


class FixedVectors:
    """Stands in for the service's CachedEmbedder: the precomputed vector of each query text."""

    model_id = LOCAL_MODEL_ID
    # No floor, as before the floor joined the Embedder protocol: with the local model's (0.78)
    # every random unit vector would score 0, and the hybrid search would time a text-only ranking.
    similarity_floor = 0.0

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self._vectors = vectors

    async def embed_query(self, text: str) -> list[float]:
        return self._vectors[text]


class Deadline:
    """Stops the SQLite statement that is running when a timed call passes its time limit.

    A progress handler on every connection of the engine: the statement fails with
    ``interrupted`` inside the app, and the call is recorded at the time it was stopped (a lower
    bound). A pathological query then costs the run seconds, not hours.
    """

    STOPPED = "interrupted"  # in the error of a statement stopped at the time limit

    def __init__(self, engine: Engine) -> None:
        self._at: float | None = None
        event.listen(engine, "connect", self._on_connect)

    def _on_connect(self, dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.set_progress_handler(self._expired, 10_000)

    def _expired(self) -> int:
        return 1 if self._at is not None and time.perf_counter() > self._at else 0

    def call(self, fn: Callable[[], object], limit_s: float) -> tuple[float, bool, object]:
        """(ms, finished in time, result) of a synchronous call."""
        gc.collect()
        started = time.perf_counter()
        self._at = started + limit_s
        try:
            value = fn()
            return (time.perf_counter() - started) * 1000, True, value
        except OperationalError as error:
            if self.STOPPED not in str(error):
                raise
            return (time.perf_counter() - started) * 1000, False, None
        finally:
            self._at = None

    async def acall(
        self, fn: Callable[[], Awaitable[object]], limit_s: float
    ) -> tuple[float, bool]:
        """(ms, finished in time) of an awaited call."""
        gc.collect()
        started = time.perf_counter()
        self._at = started + limit_s
        try:
            await fn()
            return (time.perf_counter() - started) * 1000, True
        except OperationalError as error:
            if self.STOPPED not in str(error):
                raise
            return (time.perf_counter() - started) * 1000, False
        finally:
            self._at = None


@dataclass
class Series:
    samples: list[float] = field(default_factory=list)
    stopped: int = 0  # calls stopped at the time limit (their samples are lower bounds)


@dataclass(frozen=True)
class Limits:
    want: int  # samples wanted
    budget_s: float  # no new sample after this much time (but at least MIN_SAMPLES)
    limit_s: float  # one call is stopped after this long


MIN_SAMPLES = 3


async def sample(
    deadline: Deadline,
    make_call: Callable[[int], Callable[[], Awaitable[object]]],
    limits: Limits,
    warmup: int = 1,
) -> Series:
    """Timed calls ``make_call(0), make_call(1), ...`` after ``warmup`` untimed ones.

    A warm-up stopped at the limit is the only sample; a timed call stopped at the limit ends
    the series (the next would be as slow).
    """
    out = Series()
    for i in range(warmup):
        ms, finished = await deadline.acall(make_call(i), limits.limit_s)
        if not finished:
            out.samples.append(ms)
            out.stopped += 1
            return out
    began = time.perf_counter()
    i = warmup
    while len(out.samples) < limits.want and (
        len(out.samples) < MIN_SAMPLES or time.perf_counter() - began < limits.budget_s
    ):
        ms, finished = await deadline.acall(make_call(i), limits.limit_s)
        i += 1
        out.samples.append(ms)
        if not finished:
            out.stopped += 1
            break
    return out


def unique_queries(count: int, seed: int) -> list[str]:
    """Distinct realistic queries, so the query embedding cache never answers."""
    rng = random.Random(seed)
    out: dict[str, None] = {}
    while len(out) < count:
        svc, host = rng.choice(_SERVICES), _host(rng)
        out[
            rng.choice(
                [
                    f"why did the {svc} deploy to {host} fail",
                    f"what does the user prefer for {rng.choice(_TASKS)} on {host}",
                    f"who owns the {svc} service behind {host}",
                    f"{rng.choice(_SERVICES_ZH)}在 {host} 上为什么部署失败",
                    f"how was {_code(rng)} on {host} fixed last time",
                ]
            )
        ] = None
    return list(out)


@dataclass
class SizeResult:
    size: int
    fixed: dict[str, Series] = field(default_factory=dict)  # query label → samples
    embedded: Series = field(default_factory=Series)
    neighbour: Series = field(default_factory=Series)
    hits: dict[str, int] = field(default_factory=dict)
    breakdown: dict[str, Series] = field(default_factory=dict)
    candidates: int = 0
    knn_recall: list[float] = field(default_factory=list)  # matrix top 10 against sqlite-vec's

    @property
    def all_fixed(self) -> list[float]:
        return [s for series in self.fixed.values() for s in series.samples]

    @property
    def stopped(self) -> int:
        return sum(series.stopped for series in self.fixed.values())


@dataclass(frozen=True)
class Plan:
    fixed: Limits  # per query
    neighbour: Limits
    embedded: Limits
    rounds: int  # of the breakdown


def _plan(cfg: Config, largest: bool) -> Plan:
    """Sample counts and time budgets: full figures at the largest size, growth points below it."""
    limit_s = cfg.pick(2, 1.5)
    if largest:
        return Plan(
            fixed=Limits(cfg.pick(40, 15), cfg.pick(4, 2), limit_s),
            neighbour=Limits(cfg.pick(20, 8), cfg.pick(3, 1.5), limit_s),
            embedded=Limits(cfg.pick(40, 15), cfg.pick(6, 3), limit_s),
            rounds=cfg.pick(5, 3),
        )
    return Plan(
        fixed=Limits(cfg.pick(15, 10), cfg.pick(1.5, 1), limit_s),
        neighbour=Limits(0, 0, limit_s),
        embedded=Limits(cfg.pick(10, 5), 1, limit_s),
        rounds=0,
    )


async def _measure(
    uow: UnitOfWork,
    deadline: Deadline,
    size: int,
    vectors: dict[str, list[float]],
    embedder: LocalE5Embedder | None,
    plan: Plan,
    neighbour: bool,
) -> SizeResult:
    """The timed searches at one size; without ``embedder`` no *+ query embedding* series."""
    out = SizeResult(size)
    fixed = MemoryService(uow, FixedVectors(vectors))  # type: ignore[arg-type]
    caller = Caller(TENANT, USER, AGENT)

    def search(service: MemoryService, who: Caller, query: str) -> Callable[[], Awaitable[object]]:
        async def call() -> object:
            result = await search_memories(service, who, SearchInput(query=query))
            out.hits[query] = len(result.results)
            return result

        return call

    for label, query in QUERIES:
        out.fixed[label] = await sample(
            deadline, lambda _i, q=query: search(fixed, caller, q), plan.fixed
        )
    if neighbour:
        other = Caller(TENANT, NEIGHBOUR, AGENT)
        out.neighbour = await sample(
            deadline, lambda i: search(fixed, other, QUERIES[i % len(QUERIES)][1]), plan.neighbour
        )
    if embedder is None:
        return out
    real = MemoryService(uow, CachedEmbedder(uow, embedder))
    queries = unique_queries(plan.embedded.want + 1, seed=size)
    out.embedded = await sample(deadline, lambda i: search(real, caller, queries[i]), plan.embedded)
    return out


def _breakdown(
    uow: UnitOfWork,
    deadline: Deadline,
    vectors: dict[str, list[float]],
    plan: Plan,
    out: SizeResult,
) -> None:
    """Diagnostic: the parts of one no-embedding search, timed alone."""
    owners = [("user", USER), ("agent", AGENT)]
    partition = owner_key(TENANT, ("user", USER))
    service = MemoryService(uow, None)
    vec0 = SqliteMemoryVectors(VectorCache(budget_bytes=0))  # sqlite-vec's own KNN, no matrix
    bare = text(
        f"SELECT rowid, bm25({MEMORY_FTS}) AS rank FROM {MEMORY_FTS} WHERE {MEMORY_FTS} MATCH :q ORDER BY rank LIMIT :k"
    )
    limit_s = plan.fixed.limit_s
    parts = out.breakdown

    def timed(name: str, fn: Callable[[], object]) -> tuple[bool, object]:
        series = parts.setdefault(name, Series())
        if series.stopped:
            return False, None  # stopped once: as slow again, not worth the time
        ms, finished, value = deadline.call(fn, limit_s)
        series.samples.append(ms)
        series.stopped += 0 if finished else 1
        return finished, value

    for _ in range(plan.rounds):
        for label, query in QUERIES:
            vector = vectors[query]
            req = SearchInput(query=query)
            pool = max(req.limit * 4, 20)
            expression = memory_phrases(parse_query(query))
            # The bare FTS5 table is asked in its own syntax: the phrases joined by OR.
            fts5_query = " OR ".join(
                '"' + " ".join(p.tokens) + '"' + ("*" if p.prefix else "") for p in expression
            )
            with uow.read() as db:
                _, matrix_hits = timed(
                    "knn",
                    lambda db=db, v=vector, k=pool: (
                        uow.storage.memory_vectors.nearest_memory_chunks(db, partition, v, k)
                    ),
                )
                finished, exact_hits = timed(
                    "vec0 knn",
                    lambda db=db, v=vector, k=pool: vec0.nearest_memory_chunks(db, partition, v, k),
                )
                if finished and matrix_hits is not None:
                    exact = {h.row_id for h in exact_hits[:10]}  # type: ignore[index]
                    found = {h.row_id for h in matrix_hits[:10]}  # type: ignore[index]
                    out.knn_recall.append(len(exact & found) / max(1, len(exact)))
                timed(
                    f"bare fts {label}",
                    lambda db=db, e=fts5_query, k=pool: db.execute(bare, {"q": e, "k": k}).all(),
                )
                timed(
                    f"fts {label}",
                    lambda db=db, e=expression, k=pool: (
                        uow.storage.memory_words.match_memory_chunks(db, TENANT, owners, e, k)
                    ),
                )
            if parts[f"fts {label}"].stopped:
                continue  # _collect runs the same statement
            finished, value = timed(
                f"collect {label}",
                lambda r=req, v=vector: asyncio.run(
                    _collect(service, TENANT, owners, r, r.query, v, "hybrid")
                ),
            )
            if finished:
                merged, memories = value  # type: ignore[misc]
                out.candidates = max(out.candidates, len(merged))
                timed("rank", lambda m=merged, mem=memories, r=req: _rank(m, mem, r))


def run(cfg: Config) -> list[Row]:
    sizes = [1000, 10000] if cfg.quick else [1000, 10000, 100000]
    largest = sizes[-1]
    np_rng = np.random.default_rng(20251122)
    rng = random.Random(42)
    embedder = LocalE5Embedder()
    embedder.load()
    vectors = {
        q: v.tolist()
        for (_, q), v in zip(QUERIES, random_unit_vectors(len(QUERIES), np_rng), strict=True)
    }
    results: dict[int, SizeResult] = {}
    build_notes: list[str] = []
    with temp_dir("memory-search") as tmp:
        path = migrated_db(tmp / "memories.db")
        corpus, _ = user_corpus(largest, seed=7, planted=PLANTED_COUNT)
        now = utcnow()
        have = 0
        for size in sizes:
            started = time.perf_counter()
            builder = open_uow(path, build=True)
            try:
                if have == 0:
                    others, _ = user_corpus(NEIGHBOUR_SIZE, seed=8)
                    insert_memories(
                        builder,
                        ("user", NEIGHBOUR),
                        others,
                        random_unit_vectors(NEIGHBOUR_SIZE, np_rng),
                        rng,
                        now,
                    )
                # The planted memories are spread over the largest corpus; a smaller size is its prefix.
                insert_memories(
                    builder,
                    ("user", USER),
                    corpus[have:size],
                    random_unit_vectors(size - have, np_rng),
                    rng,
                    now,
                )
                checkpoint(builder)
            finally:
                builder.engine.dispose()
            build_notes.append(
                f"{size // 1000}k: +{size - have:,} in {time.perf_counter() - started:.1f} s"
            )
            have = size
            uow = open_uow(path)
            deadline = Deadline(uow.engine)
            try:
                plan = _plan(cfg, size == largest)
                results[size] = asyncio.run(
                    _measure(uow, deadline, size, vectors, embedder, plan, size == largest)
                )
                if size == largest:
                    _breakdown(uow, deadline, vectors, plan, results[size])
            finally:
                uow.engine.dispose()
        db_mb = (
            sum(
                Path(f"{path}{s}").stat().st_size
                for s in ("", "-wal")
                if Path(f"{path}{s}").exists()
            )
            / 2**20
        )
    return _rows(results, sizes, build_notes, db_mb, _plan(cfg, True))


def _mean(values: list[float]) -> str:
    return f"{sum(values) / len(values):.3f} (n={len(values)})" if values else "-"


def p50_text(series: Series | None) -> str:
    """The p50 of a series, or ">max" when a call was stopped at the time limit."""
    if series is None or not series.samples:
        return "-"
    return (
        ">" + fmt_ms(max(series.samples))
        if series.stopped
        else fmt_ms(percentile(series.samples, 50))
    )


def _limit_text(limit_s: float) -> str:
    return f"{limit_s:g} s"


def _p50_p95(series: list[float]) -> str:
    return f"{fmt_ms(percentile(series, 50))}/{fmt_ms(percentile(series, 95))}" if series else "-"


def _stopped(count: int, limit_s: float) -> str:
    return f", {count} stopped at {_limit_text(limit_s)}" if count else ""


def _rows(
    results: dict[int, SizeResult],
    sizes: list[int],
    build_notes: list[str],
    db_mb: float,
    plan: Plan,
) -> list[Row]:
    largest = sizes[-1]
    top = results[largest]
    limit_s = plan.fixed.limit_s
    samples = top.all_fixed
    p50, p99 = summary(samples)
    fixed = Row(
        name="memory search (no embedding)",
        workload=f"{largest:,} chunks in one user's partition, hybrid, limit 10, {len(QUERIES)} queries",
        p50_ms=p50,
        p99_ms=p99,
        target=f"p95<={TARGET_P95_MS} ms",
        figure=percentile(samples, 95),
        target_value=TARGET_P95_MS,
        samples=len(samples),
    )
    growth = " -> ".join(
        f"{n // 1000}k: {_p50_p95(results[n].all_fixed)}{_stopped(results[n].stopped, limit_s)}"
        for n in sizes
    )
    fixed.notes.append(f"figure = p95 over every query's samples; growth p50/p95 ms {growth}")
    per_query = ", ".join(
        f"{label} {_p50_p95(top.fixed[label].samples)} (n={len(top.fixed[label].samples)}, {top.hits.get(query, 0)} hits"
        f"{_stopped(top.fixed[label].stopped, limit_s)})"
        for label, query in QUERIES
    )
    fixed.notes.append(f"per query at {largest // 1000}k, p50/p95 ms: {per_query}")
    if any(results[n].stopped for n in sizes):
        fixed.notes.append(
            f"a call still running after {_limit_text(limit_s)} is stopped (SQLite progress handler) and counted at that "
            "time, so figures with stopped calls are lower bounds"
        )
    b = top.breakdown

    def part(name: str) -> str:
        return p50_text(b.get(name))

    fixed.notes.append(
        f"where the time goes at {largest // 1000}k (p50 ms, each part alone): the dialect's KNN over the partition "
        f"(k=40, the in-process matrix) {part('knn')}, sqlite-vec's own KNN {part('vec0 knn')}, recall@10 of the "
        f"matrix against sqlite-vec {_mean(top.knn_recall)}; the dialect's match_memory_chunks (BM25 top 40 from the partition's postings, the current memories' rows) "
        + ", ".join(f"{label} {part(f'fts {label}')}" for label, _ in QUERIES)
        + "; the bare FTS5 MATCH top 40 without the join "
        + ", ".join(f"{label} {part(f'bare fts {label}')}" for label, _ in QUERIES)
        + "; _collect (both sides + loading rows + merge) "
        + ", ".join(f"{label} {part(f'collect {label}')}" for label, _ in QUERIES)
        + f"; _rank (decay + MMR over up to {top.candidates} candidates) {part('rank')}"
    )
    if top.neighbour.samples:
        fixed.notes.append(
            f"a {NEIGHBOUR_SIZE // 1000}k-chunk user in the same database: p50/p95 {_p50_p95(top.neighbour.samples)} ms"
            f"{_stopped(top.neighbour.stopped, limit_s)}"
        )
    fixed.notes.append(
        "method: search_memories in process with a stand-in embedder that returns a precomputed vector "
        f"(no model, no cache); synthetic text, random unit vectors; built {'; '.join(build_notes)}; "
        f"database {db_mb:.0f} MiB"
    )
    e50, e99 = summary(top.embedded.samples)
    embedded = Row(
        name="memory search (+ query embedding)",
        workload=f"{largest:,} chunks, hybrid, limit 10, every query new (model + cache)",
        p50_ms=e50,
        p99_ms=e99,
        target="-",
        figure=percentile(top.embedded.samples, 95),
        target_value=None,
        samples=len(top.embedded.samples),
    )
    growth = " -> ".join(
        f"{n // 1000}k: {_p50_p95(results[n].embedded.samples)}{_stopped(results[n].embedded.stopped, limit_s)}"
        for n in sizes
    )
    embedded.notes.append(
        f"figure = p95 (quality.md sets no target for this row); growth p50/p95 ms {growth}; "
        "the query embedding's own cost is in the embeddings rows"
    )
    return [fixed, embedded]
