"""Tenant isolation through the API: one tenant's session, archive and memory, and what another
tenant sees of them (docs/api.md, Identity: another tenant's data is answered like missing data)."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from tests.helpers.messages import assistant, user


@dataclass(frozen=True)
class TenantData:
    session_id: str
    archive_id: str
    memory_id: str
    marker: str


async def seed_tenant(
    client: httpx.AsyncClient, headers: dict[str, str], marker: str
) -> TenantData:
    """A session with one archive and one memory, each holding ``marker`` (the archive's Phase 2
    is not waited for: API replicas may run without a worker)."""
    session_id = f"{marker}-session"
    turn = await client.post(
        "/after-turn",
        headers=headers,
        json={"sessionId": session_id, "messages": [user(f"{marker} plans"), assistant("noted")]},
    )
    assert turn.status_code == 200, turn.text
    commit = await client.post(
        f"/sessions/{session_id}/commit",
        headers=headers,
        json={"keepRecentCount": 0, "wait": False},
    )
    assert commit.status_code == 200, commit.text
    archive_id = commit.json()["archiveId"]
    memory = await client.post(
        "/memories", headers=headers, json={"content": f"{marker} fact", "category": "entities"}
    )
    assert memory.status_code == 200, memory.text
    return TenantData(session_id, archive_id, memory.json()["memory"]["id"], marker)


async def assert_visible(
    client: httpx.AsyncClient, headers: dict[str, str], data: TenantData
) -> None:
    session = await client.get(f"/sessions/{data.session_id}", headers=headers)
    assert session.status_code == 200, session.text
    archive = await client.get(
        f"/archives/{data.archive_id}", params={"sessionId": data.session_id}, headers=headers
    )
    assert archive.status_code == 200 and data.marker in archive.text, archive.text
    memory = await client.get(f"/memories/{data.memory_id}", headers=headers)
    assert memory.status_code == 200 and data.marker in memory.text, memory.text


async def assert_hidden(
    client: httpx.AsyncClient, headers: dict[str, str], data: TenantData
) -> None:
    """Everything of ``data`` is a 404 for ``headers``' tenant, and no listing shows it."""
    answers = [
        await client.get(f"/sessions/{data.session_id}", headers=headers),
        await client.get(
            f"/archives/{data.archive_id}", params={"sessionId": data.session_id}, headers=headers
        ),
        await client.post(
            "/archives/search",
            json={"sessionId": data.session_id, "query": data.marker},
            headers=headers,
        ),
        await client.get(f"/memories/{data.memory_id}", headers=headers),
    ]
    for answer in answers:
        assert answer.status_code == 404, answer.text
        assert answer.json()["error"]["code"] == "NOT_FOUND"
    listing = await client.get("/memories", params={"limit": 200}, headers=headers)
    assert listing.status_code == 200 and data.marker not in listing.text
    found = await client.post("/memories/search", json={"query": data.marker}, headers=headers)
    assert found.status_code == 200 and data.marker not in found.text
