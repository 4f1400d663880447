"""Embedders: the bundled local e5 model, an OpenAI-compatible endpoint (mocked), and the fake."""

from __future__ import annotations

import asyncio
import json
import math
import random
import threading
import time
from typing import Any

import httpx
import numpy as np
import pytest
import respx

from app.providers.embeddings import (
    LOCAL_DIMENSIONS,
    LOCAL_MODEL_ID,
    LocalE5Embedder,
    OpenAICompatibleEmbedder,
)
from app.providers.fake_embeddings import FakeEmbedder
from app.providers.protocols import Embedder, PermanentProviderError, TransientProviderError
from app.providers.vector_math import cosine

BASE = "https://embed.example.test/v1"
URL = f"{BASE}/embeddings"
KEY = "sk-embed-secret-456"


def norm(vector: list[float]) -> float:
    """The L2 length of ``vector``."""
    return math.sqrt(sum(x * x for x in vector))


# --- local model -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def local() -> LocalE5Embedder:
    embedder = LocalE5Embedder()
    embedder.load()
    return embedder


async def test_local_model_loads_from_the_package_and_gives_unit_vectors(local: LocalE5Embedder):
    vectors = await local.embed_passages(["The user likes green tea", "用户喜欢喝绿茶"])
    assert local.loaded
    assert (local.provider, local.model_id, local.dimensions) == ("local", LOCAL_MODEL_ID, 384)
    assert [len(v) for v in vectors] == [LOCAL_DIMENSIONS, LOCAL_DIMENSIONS]
    assert all(type(x) is float for x in vectors[0])
    assert all(abs(norm(v) - 1.0) < 1e-4 for v in vectors)


async def test_local_fit_counts_the_models_own_tokens(local: LocalE5Embedder):
    """A dashed run is about one of the model's tokens per character, prose about a quarter."""
    model = local._get_model()
    dashed = "a-" * 2000
    [cut] = await local.fit_passages([dashed, "never read"], 512)
    assert dashed.startswith(cut)
    assert model.token_count(cut) <= 512 < model.token_count(dashed[: len(cut) + 1])
    prose = ["The user likes green tea.", "用户喜欢喝绿茶"]
    assert await local.fit_passages(prose, 512) == prose
    assert await local.fit_passages(prose, model.token_count(prose[0])) == prose[:1]


async def test_chinese_is_closer_to_its_translation_than_to_unrelated_text(local: LocalE5Embedder):
    [query] = await local.embed_queries(["用户喜欢喝绿茶"])
    translation, unrelated = await local.embed_passages(
        ["The user likes green tea", "The deployment failed"]
    )
    assert cosine(query, translation) > cosine(query, unrelated) + 0.05


async def test_query_and_passage_prefixes_give_different_vectors(local: LocalE5Embedder):
    [as_query] = await local.embed_queries(["green tea"])
    [as_passage] = await local.embed_passages(["green tea"])
    assert 0.5 < cosine(as_query, as_passage) < 0.999


async def test_local_batch_results_follow_input_order(local: LocalE5Embedder):
    texts = ["green tea", "database migration", "用户喜欢喝绿茶", "weekly standup", "red wine"]
    batched = await local.embed_passages(texts)
    one_by_one = [(await local.embed_passages([text]))[0] for text in texts]
    assert all(cosine(a, b) > 0.999 for a, b in zip(batched, one_by_one, strict=True))
    assert await local.embed_passages([]) == []


class SlowModel:
    """A stand-in engine that blocks its thread, counts its loads and records its batch sizes."""

    loads = 0

    def __init__(self) -> None:
        type(self).loads += 1
        self.sizes: list[int] = []
        time.sleep(0.05)

    def query(self, texts: list[str]) -> np.ndarray:
        return self.passage(texts)

    def passage(self, texts: list[str]) -> np.ndarray:
        self.sizes.append(len(texts))
        time.sleep(0.05)
        rows = np.zeros((len(texts), LOCAL_DIMENSIONS), dtype=np.float32)
        rows[np.arange(len(texts)), [len(text) % LOCAL_DIMENSIONS for text in texts]] = 1.0
        return rows


async def test_local_splits_passages_into_batches_of_32_in_order():
    model = SlowModel()
    embedder = LocalE5Embedder(factory=lambda: model)
    texts = ["x" * n for n in range(70)]
    vectors = await embedder.embed_passages(texts)
    assert model.sizes == [32, 32, 6]
    assert [vector.index(1.0) for vector in vectors] == list(range(70))


async def test_local_loads_once_and_never_blocks_the_event_loop():
    SlowModel.loads = 0
    embedder = LocalE5Embedder(batch_size=1, factory=SlowModel)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.005)

    task = asyncio.create_task(ticker())
    results = await asyncio.gather(
        *(embedder.embed_passages(["a", "b"]) for _ in range(3)), embedder.warm()
    )
    task.cancel()
    assert SlowModel.loads == 1
    assert [len(r) for r in results[:3]] == [2, 2, 2]
    assert ticks >= 10


def test_local_load_is_thread_safe():
    SlowModel.loads = 0
    embedder = LocalE5Embedder(factory=SlowModel)
    threads = [threading.Thread(target=embedder.load) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert SlowModel.loads == 1
    assert LocalE5Embedder().endpoint_key == embedder.endpoint_key


# --- OpenAI-compatible endpoint ----------------------------------------------------------------


def answer(vectors: list[list[float]], order: list[int] | None = None) -> dict[str, Any]:
    """An /embeddings body; items listed in ``order`` of their index."""
    indices = order if order is not None else list(range(len(vectors)))
    items = [{"object": "embedding", "index": i, "embedding": vectors[i]} for i in indices]
    return {"object": "list", "model": "served", "data": items}


def reply_echo(request: httpx.Request) -> httpx.Response:
    """A reply mapping each input to ``[len(text), 1]``, items listed in reverse index order."""
    inputs = json.loads(request.content)["input"]
    vectors = [[float(len(text)), 1.0] for text in inputs]
    return httpx.Response(200, json=answer(vectors, order=list(reversed(range(len(inputs))))))


class Remote:
    """An OpenAICompatibleEmbedder wired to a recording sleep."""

    def __init__(self, client: httpx.AsyncClient, **overrides: Any) -> None:
        self.sleeps: list[float] = []
        options: dict[str, Any] = {
            "base_url": BASE + "/",
            "model": "embed-model",
            "api_key": KEY,
            "sleep": self._sleep,
            "rng": random.Random(3),
        }
        options.update(overrides)
        self.embedder = OpenAICompatibleEmbedder(client, **options)

    async def _sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)


@pytest.fixture
async def client():
    async with httpx.AsyncClient() as http:
        yield http


@pytest.fixture
def remote(client: httpx.AsyncClient) -> Remote:
    return Remote(client)


@pytest.fixture
def api():
    with respx.mock(assert_all_called=False) as router:
        yield router


async def test_remote_orders_by_index_and_normalises(remote: Remote, api: respx.Router):
    route = api.post(URL).respond(200, json=answer([[3.0, 4.0], [0.0, 2.0]], order=[1, 0]))
    vectors = await remote.embedder.embed_passages(["first", "second"])
    assert vectors == [[0.6, 0.8], [0.0, 1.0]]
    body = json.loads(route.calls[0].request.content)
    assert body == {"model": "embed-model", "input": ["first", "second"]}
    assert remote.embedder.dimensions == 2


async def test_remote_splits_requests_at_batch_size(client: httpx.AsyncClient, api: respx.Router):
    route = api.post(URL).mock(side_effect=reply_echo)
    embedder = Remote(client, batch_size=2).embedder
    texts = ["a", "bb", "ccc", "dddd", "eeeee"]
    vectors = await embedder.embed_queries(texts)
    assert [json.loads(call.request.content)["input"] for call in route.calls] == [
        ["a", "bb"],
        ["ccc", "dddd"],
        ["eeeee"],
    ]
    expected = [
        [n / math.hypot(n, 1.0), 1.0 / math.hypot(n, 1.0)] for n in (1.0, 2.0, 3.0, 4.0, 5.0)
    ]
    assert all(cosine(v, e) > 0.999999 for v, e in zip(vectors, expected, strict=True))


async def test_remote_sends_configured_dimensions_and_rejects_a_mismatch(client, api: respx.Router):
    route = api.post(URL).respond(200, json=answer([[1.0, 0.0, 0.0]]))
    embedder = Remote(client, dimensions=3).embedder
    assert embedder.dimensions == 3
    await embedder.embed_passages(["x"])
    assert json.loads(route.calls[0].request.content)["dimensions"] == 3
    api.post(URL).respond(200, json=answer([[1.0, 0.0]]))
    with pytest.raises(PermanentProviderError, match="2 dimensions, expected 3"):
        await embedder.embed_passages(["y"])


async def test_remote_learns_dimensions_from_the_first_answer(remote: Remote, api: respx.Router):
    assert remote.embedder.dimensions == 0
    api.post(URL).respond(200, json=answer([[1.0] * 5]))
    await remote.embedder.embed_passages(["x"])
    assert remote.embedder.dimensions == 5


async def test_remote_honours_retry_after_on_429(remote: Remote, api: respx.Router):
    api.post(URL).mock(
        side_effect=[
            httpx.Response(
                429, headers={"Retry-After": "7"}, json={"error": {"message": "slow down"}}
            ),
            httpx.Response(200, json=answer([[1.0, 0.0]])),
        ]
    )
    assert await remote.embedder.embed_passages(["x"]) == [[1.0, 0.0]]
    assert len(remote.sleeps) == 1 and remote.sleeps[0] >= 7.0


async def test_remote_retries_5xx_then_raises_transient(remote: Remote, api: respx.Router):
    route = api.post(URL).respond(503, json={"error": {"message": f"overloaded for {KEY}"}})
    with pytest.raises(TransientProviderError, match="after 4 attempts") as caught:
        await remote.embedder.embed_passages(["x"])
    assert route.call_count == 4 and len(remote.sleeps) == 3
    assert caught.value.status == 503 and KEY not in str(caught.value)


async def test_remote_retries_connection_errors_and_timeouts(remote: Remote, api: respx.Router):
    api.post(URL).mock(
        side_effect=[
            httpx.ConnectError("refused"),
            httpx.ReadTimeout("slow"),
            httpx.Response(200, json=answer([[0.0, 2.0]])),
        ]
    )
    assert await remote.embedder.embed_passages(["x"]) == [[0.0, 1.0]]
    assert len(remote.sleeps) == 2


async def test_remote_400_is_permanent_without_retry(remote: Remote, api: respx.Router):
    route = api.post(URL).respond(400, json={"error": {"message": "input too long"}})
    with pytest.raises(PermanentProviderError, match="HTTP 400: input too long") as caught:
        await remote.embedder.embed_passages(["x"])
    assert caught.value.status == 400 and route.call_count == 1 and remote.sleeps == []


@pytest.mark.parametrize(
    "body",
    [
        {"data": "nope"},
        {"data": [{"index": 0, "embedding": [1.0, 0.0]}]},
        {"data": [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 0, "embedding": [0.0, 1.0]}]},
        {"data": [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 5, "embedding": [0.0, 1.0]}]},
        {"data": [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 1, "embedding": ["a", 1.0]}]},
        {"data": [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 1, "embedding": [0.0, 0.0]}]},
        {"data": [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 1, "embedding": [1.0]}]},
        ["not", "an", "object"],
    ],
)
async def test_remote_malformed_answers_are_permanent(remote: Remote, api: respx.Router, body: Any):
    route = api.post(URL).respond(200, json=body)
    with pytest.raises(PermanentProviderError):
        await remote.embedder.embed_passages(["x", "y"])
    assert route.call_count == 1


async def test_remote_non_json_answer_is_permanent(remote: Remote, api: respx.Router):
    api.post(URL).respond(200, text="<html>oops</html>")
    with pytest.raises(PermanentProviderError, match="not JSON"):
        await remote.embedder.embed_passages(["x"])


async def test_remote_sends_the_key_but_its_endpoint_key_hides_it(
    client, remote: Remote, api: respx.Router
):
    route = api.post(URL).respond(200, json=answer([[1.0, 0.0]]))
    await remote.embedder.embed_queries(["x"])
    assert route.calls[0].request.headers["Authorization"] == f"Bearer {KEY}"
    key = remote.embedder.endpoint_key
    assert KEY not in key and len(key) == 64
    other_model = Remote(client, model="other").embedder
    same = Remote(client, base_url=BASE, api_key="k2").embedder
    assert other_model.endpoint_key != key and same.endpoint_key == key


async def test_remote_without_key_sends_no_authorization(client, api: respx.Router):
    route = api.post(URL).respond(200, json=answer([[1.0, 0.0]]))
    await Remote(client, api_key=None).embedder.embed_passages(["x"])
    assert "Authorization" not in route.calls[0].request.headers
    assert await Remote(client).embedder.embed_passages([]) == []


# --- fake and helpers --------------------------------------------------------------------------


async def test_fake_is_deterministic_normalised_and_word_sensitive():
    fake, again = FakeEmbedder(), FakeEmbedder()
    tea, tea_again, unrelated = await fake.embed_passages(
        ["The user likes green tea", "the USER likes green tea!", "Deployment failed at noon"]
    )
    [query] = await again.embed_queries(["green tea"])
    assert tea == tea_again and len(tea) == 256 and abs(norm(tea) - 1.0) < 1e-9
    assert cosine(query, tea) > cosine(query, unrelated) + 0.2
    assert fake.calls == [
        ["The user likes green tea", "the USER likes green tea!", "Deployment failed at noon"]
    ]
    assert fake.provider == "fake" and fake.endpoint_key == again.endpoint_key


async def test_fake_relates_chinese_texts_by_characters():
    fake = FakeEmbedder(dimensions=64)
    tea, green_tea, deploy = await fake.embed_passages(["用户喜欢喝绿茶", "绿茶", "部署失败"])
    assert len(tea) == 64 and cosine(tea, green_tea) > cosine(tea, deploy)
    [empty] = await fake.embed_passages([""])
    assert abs(norm(empty) - 1.0) < 1e-9


async def test_every_embedder_satisfies_the_protocol(client: httpx.AsyncClient):
    embedders: list[Embedder] = [FakeEmbedder(), LocalE5Embedder(), Remote(client).embedder]
    for embedder in embedders:
        assert embedder.provider and embedder.model_id and len(embedder.endpoint_key) == 64
        long = "a b c " * 400
        [cut] = await embedder.fit_passages([long, "never read"], 64)
        assert long.startswith(cut) and 0 < len(cut) < len(long)


def test_cosine():
    assert cosine([1.0, 0.0], [2.0, 0.0]) == pytest.approx(1.0)
    assert cosine([1.0, 0.0], [0.0, 3.0]) == pytest.approx(0.0)
    assert cosine([0.0, 0.0], [1.0, 0.0]) == 0.0
    with pytest.raises(ValueError):
        cosine([1.0], [1.0, 0.0])
