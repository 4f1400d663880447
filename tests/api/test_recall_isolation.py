"""Recall never crosses tenants or users: nothing of tenant A or user A is injected for B."""

from __future__ import annotations

from tests.conftest import app_client
from tests.helpers.messages import user

A = {"Authorization": "Bearer key-a"}
B = {"Authorization": "Bearer key-b"}


async def tool_loop(client, headers, text):  # type: ignore[no-untyped-def]
    body = {"sessionId": "s", "messages": [user(text)]}
    response = await client.post("/assemble", json=body, headers=headers)
    assert response.status_code == 200
    return response.json()


async def test_recall_is_limited_to_the_callers_tenant_and_user(make_settings):
    settings = make_settings(api_keys=["key-a:tenant-a", "key-b:tenant-b"])
    async with app_client(settings) as client:
        added = await client.post(
            "/memories",
            headers={**A, "X-User-Id": "alice"},
            json={
                "content": "Alice keeps the billing runbook in notion page 42",
                "category": "entities",
            },
        )
        assert added.json()["action"] == "ADD"
        own = await tool_loop(
            client, {**A, "X-User-Id": "alice"}, "where is the billing runbook kept?"
        )
        other_user = await tool_loop(
            client, {**A, "X-User-Id": "bob"}, "where is the billing runbook kept?"
        )
        other_tenant = await tool_loop(
            client, {**B, "X-User-Id": "alice"}, "where is the billing runbook kept?"
        )
    assert "notion page 42" in own["messages"][-1]["content"]
    for body in (other_user, other_tenant):
        assert body["diagnostics"]["reason"] == "no_recall_hits"
        assert "notion page 42" not in str(body["messages"])
