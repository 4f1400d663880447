"""Per-tenant metrics: requests and rate-limit refusals labelled by tenant; a key sees its own
tenant's series only, an operator key with ``metrics:all-tenants`` (or the keyless local caller)
sees every tenant."""

from __future__ import annotations

from collections.abc import Callable

import httpx
from prometheus_client.parser import text_string_to_metric_families

from app.settings import Settings
from tests.conftest import app_client
from tests.helpers.messages import user

KEYS = ["key-a:tenant-a", "key-b:tenant-b", "key-ops:ops:metrics:all-tenants"]
A, B, OPS = ({"Authorization": f"Bearer {k}"} for k in ("key-a", "key-b", "key-ops"))


async def tenant_series(client: httpx.AsyncClient, headers: dict[str, str]) -> dict[tuple, float]:
    response = await client.get("/metrics", headers=headers)
    assert response.status_code == 200, response.text
    series: dict[tuple, float] = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            if "tenant" in sample.labels and sample.name.endswith("_total"):
                key = (sample.name, *sorted(sample.labels.items()))
                series[key] = sample.value
    return series


def value(series: dict[tuple, float], name: str, **labels: str) -> float | None:
    return series.get((name, *sorted(labels.items())))


async def test_each_key_sees_its_own_tenant_and_the_operator_sees_all(
    make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(api_keys=KEYS, rate_limit={"hooks_per_s": 0.01, "hooks_burst": 2})
    async with app_client(settings) as client:
        for index in range(3):  # the third is over tenant-a's burst
            await client.post(
                "/after-turn", json={"sessionId": "s", "messages": [user(f"a{index}")]}, headers=A
            )
        await client.post(
            "/after-turn", json={"sessionId": "s", "messages": [user("b")]}, headers=B
        )
        await client.post("/memories/search", json={"query": "b"}, headers=B)
        mine = await tenant_series(client, A)
        assert (
            value(mine, "ce_tenant_requests_total", tenant="tenant-a", kind="hooks", status="200")
            == 2
        )
        assert (
            value(mine, "ce_tenant_requests_total", tenant="tenant-a", kind="hooks", status="429")
            == 1
        )
        assert value(mine, "ce_tenant_rate_limited_total", tenant="tenant-a", kind="hooks") == 1
        assert {dict(k[1:])["tenant"] for k in mine} == {"tenant-a"}
        theirs = await tenant_series(client, B)
        assert (
            value(
                theirs, "ce_tenant_requests_total", tenant="tenant-b", kind="search", status="200"
            )
            == 1
        )
        assert {dict(k[1:])["tenant"] for k in theirs} == {"tenant-b"}
        every = await tenant_series(client, OPS)
        # (a request is counted once answered: the operator's own first call is not in it yet)
        assert {dict(k[1:])["tenant"] for k in every} == {"tenant-a", "tenant-b"}
        assert (
            value(every, "ce_tenant_requests_total", tenant="tenant-b", kind="hooks", status="200")
            == 1
        )


async def test_a_refused_key_is_counted_for_no_tenant(
    make_settings: Callable[..., Settings],
) -> None:
    async with app_client(make_settings(api_keys=KEYS)) as client:
        refused = await client.post(
            "/after-turn",
            json={"sessionId": "s", "messages": [user("x")]},
            headers={"Authorization": "Bearer wrong"},
        )
        assert refused.status_code == 401
        accepted = await client.post(
            "/after-turn", json={"sessionId": "s", "messages": [user("y")]}, headers=A
        )
        assert accepted.status_code == 200
        every = await tenant_series(client, OPS)
        assert {dict(k[1:])["tenant"] for k in every} == {"tenant-a"}
        # The accepted request only: once among the requests and once among the hook calls.
        by_name: dict[str, float] = {}
        for key, count in every.items():
            by_name[key[0]] = by_name.get(key[0], 0) + count
        assert by_name == {"ce_tenant_requests_total": 1, "ce_hook_calls_total": 1}
