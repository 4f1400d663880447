"""Bounded resources: per-tenant rate limits, a record limit on imports, a body read timeout, a
Content-Length that is not a length, keys that cannot be empty, operations behind the key."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from app.core.token_bucket import TokenBuckets
from app.settings import Settings
from tests.conftest import app_client
from tests.helpers.messages import user

A = {"Authorization": "Bearer key-a"}
B = {"Authorization": "Bearer key-b"}
KEYS = ["key-a:tenant-a", "key-b:tenant-b"]


def assert_envelope(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and body["error"]["code"] == code, body
    return body["error"]  # type: ignore[no-any-return]


# --- rate limits ---------------------------------------------------------------------------------


def test_a_token_bucket_grants_its_burst_then_its_rate() -> None:
    buckets = TokenBuckets()
    key = ("tenant", "hooks")
    assert [buckets.take(key, rate=2, burst=3, now=0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take(key, rate=2, burst=3, now=0.0) == pytest.approx(
        0.5
    )  # one token takes 1/rate
    assert buckets.take(key, rate=2, burst=3, now=0.5) == 0.0
    assert (
        buckets.take(key, rate=2, burst=3, now=100.0) == 0.0
    )  # refills up to the burst, not beyond
    assert [buckets.take(key, rate=2, burst=3, now=100.0) for _ in range(3)][-1] > 0
    assert buckets.take(("other", "hooks"), rate=2, burst=3, now=0.0) == 0.0  # per key


async def test_hooks_over_the_tenant_rate_are_429_with_retry_after(
    make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(api_keys=KEYS, rate_limit={"hooks_per_s": 0.5, "hooks_burst": 2})
    async with app_client(settings) as client:
        answers = [
            await client.post(
                "/after-turn", json={"sessionId": "s-rl", "messages": [user(f"m{i}")]}, headers=A
            )
            for i in range(3)
        ]
        assert [r.status_code for r in answers] == [200, 200, 429]
        error = assert_envelope(answers[2], 429, "RATE_LIMITED")
        assert error["details"]["limit"] == "hooks"
        assert 1 <= int(answers[2].headers["retry-after"]) <= 2
        # The limit is the tenant's: another tenant, and the tenant's reads, still go through.
        assert (
            await client.post("/assemble", json={"sessionId": "s-rl", "messages": []}, headers=B)
        ).status_code == 200
        assert (await client.get("/sessions/s-rl", headers=A)).json()["messageCount"] == 2
        assert_envelope(
            await client.post("/compact", json={"sessionId": "s-rl"}, headers=A),
            429,
            "RATE_LIMITED",
        )


async def test_each_replica_enforces_its_share_of_the_tenant_limit(
    make_settings: Callable[..., Settings],
) -> None:
    # Two replicas behind one gateway: each grants half the burst, so the tenant gets about the
    # configured burst in all when the gateway spreads requests evenly.
    settings = make_settings(
        api_keys=KEYS, rate_limit={"hooks_per_s": 0.5, "hooks_burst": 4, "replicas": 2}
    )
    async with app_client(settings) as client:
        answers = [
            await client.post(
                "/after-turn", json={"sessionId": "s-rr", "messages": [user(f"m{i}")]}, headers=A
            )
            for i in range(3)
        ]
        assert [r.status_code for r in answers] == [200, 200, 429]
        details = assert_envelope(answers[2], 429, "RATE_LIMITED")["details"]
        assert details == {"limit": "hooks", "perSecond": 0.5, "burst": 4, "replicas": 2}
        # One token of the replica's share (0.25 per second) takes four seconds to come back.
        assert 3 <= int(answers[2].headers["retry-after"]) <= 4


async def test_search_over_the_tenant_rate_is_429(make_settings: Callable[..., Settings]) -> None:
    settings = make_settings(api_keys=KEYS, rate_limit={"search_per_s": 0.5, "search_burst": 1})
    async with app_client(settings) as client:
        await client.post(
            "/after-turn", json={"sessionId": "s-rs", "messages": [user("deploy")]}, headers=A
        )
        first = await client.post("/memories/search", json={"query": "deploy"}, headers=A)
        assert first.status_code == 200
        for response in (
            await client.post("/memories/search", json={"query": "deploy"}, headers=A),
            await client.post(
                "/archives/search", json={"sessionId": "s-rs", "query": "deploy"}, headers=A
            ),
        ):
            assert_envelope(response, 429, "RATE_LIMITED")
            assert response.headers["retry-after"]
        assert (
            await client.post("/memories/search", json={"query": "deploy"}, headers=B)
        ).status_code == 200
        # Hooks have their own bucket.
        assert (
            await client.post(
                "/after-turn", json={"sessionId": "s-rs", "messages": [user("x")]}, headers=A
            )
        ).status_code == 200


async def test_rate_limits_are_documented(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    for path, method in (
        ("/after-turn", "post"),
        ("/assemble", "post"),
        ("/compact", "post"),
        ("/archives/search", "post"),
        ("/memories/search", "post"),
    ):
        assert "429" in document["paths"][path][method]["responses"], path
    assert "503" in document["paths"]["/after-turn"]["post"]["responses"]


# --- import record limit -------------------------------------------------------------------------


def records(count: int) -> str:
    return "".join(
        json.dumps(
            {
                "id": f"00000000-0000-4000-8000-{i:012d}",
                "uri": f"viking://user/default/memories/events/e{i}.md",
                "category": "events",
                "content": f"event number {i}",
                "ownerKind": "user",
                "ownerId": "default",
            }
        )
        + "\n"
        for i in range(count)
    )


async def test_an_import_over_the_record_limit_is_413_and_imports_nothing(
    make_settings: Callable[..., Settings],
) -> None:
    # One 32 MiB import took about 90 minutes: the number of records is bounded.
    async with app_client(make_settings(memory={"import_max_records": 3})) as client:
        refused = await client.post(
            "/memories/import", content=records(4), headers={"content-type": "application/x-ndjson"}
        )
        assert assert_envelope(refused, 413, "PAYLOAD_TOO_LARGE")["details"] == {"maxRecords": 3}
        assert (await client.get("/memories/export")).text == ""
        taken = await client.post(
            "/memories/import",
            content=records(3) + "\n\n",
            headers={"content-type": "application/x-ndjson"},
        )
        assert taken.status_code == 200 and taken.json()["imported"] == 3


# --- request bodies ------------------------------------------------------------------------------


async def trickle(data: bytes, pause_s: float) -> AsyncIterator[bytes]:
    for start in range(0, len(data), 8):
        await asyncio.sleep(pause_s)
        yield data[start : start + 8]


async def test_a_body_trickled_past_the_body_timeout_is_408_and_the_connection_closes(
    make_settings: Callable[..., Settings],
) -> None:
    # A body sent at 1 byte every 2 s was held for minutes.
    async with app_client(make_settings(http={"body_timeout_s": 0.3})) as client:
        body = json.dumps({"sessionId": "s-slow", "messages": [user("slowly")]}).encode()
        response = await client.post(
            "/after-turn", content=trickle(body, 0.1), headers={"content-type": "application/json"}
        )
        error = assert_envelope(response, 408, "REQUEST_TIMEOUT")
        assert "0.3" in error["message"] and response.headers["connection"] == "close"
        assert (await client.get("/sessions/s-slow")).status_code == 404
        # Sent whole: in 8-byte pieces a busy machine took more than the 0.3 s to deliver it.
        quick = await client.post(
            "/after-turn", content=body, headers={"content-type": "application/json"}
        )
        assert quick.status_code == 200, quick.text


@pytest.mark.parametrize("length", ["-5", "abc", "1e3", " "])
async def test_a_content_length_that_is_not_a_length_gets_the_envelope(
    client: httpx.AsyncClient, length: str
) -> None:
    # "Content-Length: -5" got the HTTP layer's plain-text 400 (see test_http_server for the server).
    response = await client.post(
        "/after-turn",
        content=b"{}",
        headers={"content-type": "application/json", "content-length": length},
    )
    assert_envelope(response, 400, "INVALID_ARGUMENT")


# --- API keys and operations endpoints -----------------------------------------------------------


@pytest.mark.parametrize("keys", [":t", "k1:a, :b", " :t", "k1:a,k1:b"])
def test_unusable_api_keys_are_refused(keys: str) -> None:
    with pytest.raises(ValidationError) as refused:
        Settings(api_keys=keys)
    assert "k1" not in str(refused.value)  # errors never echo the keys


async def test_an_empty_bearer_token_is_not_a_key(make_settings: Callable[..., Settings]) -> None:
    async with app_client(make_settings(api_keys=KEYS)) as client:
        for header in ("Bearer ", "Bearer", "", "Basic key-a"):
            response = await client.get("/sessions/x", headers={"Authorization": header})
            assert_envelope(response, 401, "UNAUTHENTICATED")


@pytest.mark.parametrize("path", ["/metrics", "/openapi.json", "/docs", "/redoc"])
async def test_operations_endpoints_need_the_key_when_keys_are_set(
    make_settings: Callable[..., Settings], path: str
) -> None:
    async with app_client(make_settings(api_keys=KEYS)) as client:
        assert_envelope(await client.get(path), 401, "UNAUTHENTICATED")
        assert (await client.get(path, headers=A)).status_code == 200
        for open_path in ("/healthz", "/readyz"):
            assert (await client.get(open_path)).status_code == 200
    async with app_client(
        make_settings()
    ) as keyless:  # loopback default: open, like everything else
        assert (await keyless.get(path)).status_code == 200
